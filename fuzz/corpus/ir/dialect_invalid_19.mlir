// Tests that a call passes as many arguments as the computation takes.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{computation @id takes 1 arguments but the call has 2}}
    %0 = pw.call @id(%x, %x) : (!pw.array<4xf32>, !pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}
