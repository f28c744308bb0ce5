// RUN: pw-opt %s --split-input-file --pw-dce

// Tests that calls and moves no output needs are removed, with the
// computations nothing calls any more; meshes stay.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @unused []
  module @kept attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  module @dropped attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @a, [{}]> {
    %0 = pw.call @dropped(%x) on @a : (!pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @a, [{}]>
    %1 = pw.reshard %0 : !pw.array<8xf32, @a, [{}]> -> !pw.array<8xf32, @a, [{"x"}]>
    %2 = pw.call @kept(%x) on @a : (!pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @a, [{}]>
    return %2 : !pw.array<8xf32, @a, [{}]>
  }
}
