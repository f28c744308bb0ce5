// Tests that a call's mesh has as many devices as the computation has
// partitions.
module {
  pw.mesh @m ["x"=4]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{computation @id is compiled for 2 partition(s) but mesh @m has 4 device(s)}}
    %0 = pw.call @id(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}
