// Tests a program without meshes: every call and input lands on a new one.
module {
  module @one attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<4xi32>) -> tensor<4xi32> {
      return %x : tensor<4xi32>
    }
  }
  func.func @main(%x: !pw.array<4xi32>, %unused: !pw.array<2xf32>) -> !pw.array<4xi32> {
    %0 = pw.call @one(%x) : (!pw.array<4xi32>) -> !pw.array<4xi32>
    return %0 : !pw.array<4xi32>
  }
}
