// Tests that in_shardings lists axis names and nothing else (a number
// among the names would silently drop out).
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32, @m, [{}]>) {
    // expected-error@+1 {{in_shardings must list, per operand, the axes of each dimension}}
    %0 = pw.call @f(%x) on @m {in_shardings = [[["x", 3]]]} : (!pw.array<4xf32, @m, [{}]>) -> !pw.array<4xf32, @m, [{}]>
    return
  }
}
