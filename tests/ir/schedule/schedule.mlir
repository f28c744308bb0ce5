// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-schedule

// Tests critical-path-first order: the expensive branch (a 64x64x64
// matmul feeding another) is started before the cheap one, although the
// cheap one comes first in the program; dependencies are respected.
module {
  pw.mesh @a []
  pw.mesh @b []
  module @cheap attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
      return %x : tensor<64x64xf32>
    }
  }
  module @matmul attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
      %0 = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      return %0 : tensor<64x64xf32>
    }
  }
  func.func @main(%x: !pw.array<64x64xf32, @a, [{}, {}]>, %y: !pw.array<64x64xf32, @b, [{}, {}]>) -> (!pw.array<64x64xf32, @a, [{}, {}]>, !pw.array<64x64xf32, @b, [{}, {}]>) {
    %0 = pw.call @cheap(%x) on @a : (!pw.array<64x64xf32, @a, [{}, {}]>) -> !pw.array<64x64xf32, @a, [{}, {}]>
    %1 = pw.call @matmul(%y) on @b : (!pw.array<64x64xf32, @b, [{}, {}]>) -> !pw.array<64x64xf32, @b, [{}, {}]>
    %2 = pw.call @matmul(%1) on @b : (!pw.array<64x64xf32, @b, [{}, {}]>) -> !pw.array<64x64xf32, @b, [{}, {}]>
    return %0, %2 : !pw.array<64x64xf32, @a, [{}, {}]>, !pw.array<64x64xf32, @b, [{}, {}]>
  }
}

// -----

// Tests that a cycle introduced by hand is refused: a value used before it
// is defined does not dominate its use.
module {
  pw.mesh @a []
  module @f attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]> {
    // expected-error@+1 {{operand #1 does not dominate this use}}
    %0 = pw.call @f(%x, %1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    // expected-note@+1 {{operand defined here}}
    %1 = pw.call @f(%x, %0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %1 : !pw.array<4xf32, @a, [{}]>
  }
}
