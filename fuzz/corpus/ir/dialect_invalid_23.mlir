// Tests that a placed call's results live on its mesh.
module {
  pw.mesh @m []
  pw.mesh @n []
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is on @n but the call is on @m}}
    %0 = pw.call @id(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @n>
    return
  }
}
