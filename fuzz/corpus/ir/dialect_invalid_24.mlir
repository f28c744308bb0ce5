// Tests that an unplaced call has unplaced results.
module {
  pw.mesh @m []
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is on @m but the call is unplaced}}
    %0 = pw.call @id(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}
