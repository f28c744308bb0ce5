// Tests that explicit placements are kept and an input goes to its
// consumer's mesh.
module {
  pw.mesh @a ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>) -> !pw.array<8xf32, @a> {
    %0 = pw.call @f(%x) on @a : (!pw.array<8xf32>) -> !pw.array<8xf32, @a>
    return %0 : !pw.array<8xf32, @a>
  }
}
