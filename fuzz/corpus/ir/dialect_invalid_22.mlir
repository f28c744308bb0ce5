// Tests that result types match the computation's signature.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is tensor<4xi32> but computation @id expects tensor<4xf32>}}
    %0 = pw.call @id(%x) : (!pw.array<4xf32>) -> !pw.array<4xi32>
    return
  }
}
