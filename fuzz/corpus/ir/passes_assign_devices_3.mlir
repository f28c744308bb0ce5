// Tests that a call no mesh fits gets a new mesh of its own shape, on the
// island of the mesh its operand comes from.
module {
  pw.mesh @a ["x"=2]
  module @two attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  module @one attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>) -> !pw.array<8xf32> {
    %0 = pw.call @two(%x) on @a : (!pw.array<8xf32>) -> !pw.array<8xf32, @a>
    %1 = pw.call @one(%0) : (!pw.array<8xf32, @a>) -> !pw.array<8xf32>
    return %1 : !pw.array<8xf32>
  }
}
