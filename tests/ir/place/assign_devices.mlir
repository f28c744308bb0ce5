// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-assign-devices

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

// -----

// Tests that an unplaced call goes to the mesh holding most bytes of its
// operands: 128 bytes come from @a, 32 from @b.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  module @big attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main() -> tensor<32xf32> {
      %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<32xf32>}> : () -> tensor<32xf32>
      return %0 : tensor<32xf32>
    }
  }
  module @small attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main() -> tensor<8xf32> {
      %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<8xf32>}> : () -> tensor<8xf32>
      return %0 : tensor<8xf32>
    }
  }
  module @use attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<32xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
      return %y : tensor<8xf32>
    }
  }
  func.func @main() -> !pw.array<8xf32> {
    %0 = pw.call @big() on @a : () -> !pw.array<32xf32, @a>
    %1 = pw.call @small() on @b : () -> !pw.array<8xf32, @b>
    %2 = pw.call @use(%0, %1) : (!pw.array<32xf32, @a>, !pw.array<8xf32, @b>) -> !pw.array<8xf32>
    return %2 : !pw.array<8xf32>
  }
}

// -----

// Tests the tie rule: with no operand on any mesh, calls go to the least
// loaded fitting mesh, first declared first.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  pw.mesh @solo []
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>, %y: !pw.array<8xf32>) -> (!pw.array<8xf32>, !pw.array<8xf32>) {
    %0 = pw.call @f(%x) : (!pw.array<8xf32>) -> !pw.array<8xf32>
    %1 = pw.call @f(%y) : (!pw.array<8xf32>) -> !pw.array<8xf32>
    return %0, %1 : !pw.array<8xf32>, !pw.array<8xf32>
  }
}

// -----

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

// -----

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

// -----

// Tests that a program's verifier errors stop the pass before it runs.
module {
  func.func @main(%x: !pw.array<4xf32>) -> !pw.array<4xf32> {
    // expected-error@+1 {{call to unknown computation @missing}}
    %0 = pw.call @missing(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return %0 : !pw.array<4xf32>
  }
}
