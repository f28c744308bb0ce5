// Tests that in_shardings has one entry per operand.
module {
  pw.mesh @m ["x"=2]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{in_shardings has 2 entries for 1 operands}}
    %0 = pw.call @id(%x) on @m {in_shardings = [[["x"]], [[]]]} : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}
