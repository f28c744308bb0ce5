// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-lower-to-physical

// Tests, on the default island of 8 devices: meshes get distinct devices;
// a transfer of rows-split to columns-split arrays becomes two gathers; a
// reshard from replicated to split on the same devices is local
// (same_device copies); a replicated source is read from both replicas.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2] {kind = "cpu"}
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      return %x : tensor<4x8xf32>
    }
  }
  func.func @main(%r: !pw.array<4x8xf32, @a, [{"x"}, {}]>, %f: !pw.array<4x8xf32, @a, [{}, {}]>) -> (!pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>) {
    %0 = pw.transfer %r : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %1 = pw.reshard %f : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @a, [{"x"}, {}]>
    %2 = pw.transfer %f : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %3 = pw.call @f(%0) on @b : (!pw.array<4x8xf32, @b, [{}, {"x"}]>) -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    return %3, %1, %2 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>
  }
}

// -----

// Tests that an array with no elements, sharded over one mesh and sent to
// another, still gets a piece for every destination shard (each empty),
// so every shard is written.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  func.func @main(%x: !pw.array<0x4xf32, @a, [{}, {"x"}]>) -> !pw.array<0x4xf32, @b, [{"x"}, {}]> {
    %0 = pw.transfer %x : !pw.array<0x4xf32, @a, [{}, {"x"}]> -> !pw.array<0x4xf32, @b, [{"x"}, {}]>
    return %0 : !pw.array<0x4xf32, @b, [{"x"}, {}]>
  }
}

// -----

// Tests that a replicated destination gets a whole copy on each device,
// scattered from one source shard when the source is whole.
module {
  pw.mesh @one []
  pw.mesh @two ["x"=2]
  func.func @main(%x: !pw.array<6xf32, @one, [{}]>) -> (!pw.array<6xf32, @two, [{}]>, !pw.array<6xf32, @two, [{"x"}]>) {
    %0 = pw.transfer %x : !pw.array<6xf32, @one, [{}]> -> !pw.array<6xf32, @two, [{}]>
    %1 = pw.transfer %x : !pw.array<6xf32, @one, [{}]> -> !pw.array<6xf32, @two, [{"x"}]>
    return %0, %1 : !pw.array<6xf32, @two, [{}]>, !pw.array<6xf32, @two, [{"x"}]>
  }
}

// -----

// Tests that more meshes than devices share devices, least used first.
module {
  pw.mesh @a ["x"=4]
  pw.mesh @b ["x"=4]
  pw.mesh @c ["x"=2]
  func.func @main() {
    return
  }
}

// -----

// Tests an unsatisfiable request: a mesh bigger than the island.
module {
  // expected-error@+1 {{mesh @huge needs 16 devices on one island; the largest such island has 8}}
  pw.mesh @huge ["x"=16]
  func.func @main() {
    return
  }
}

// -----

// Tests an unsatisfiable device kind.
module {
  // expected-error@+1 {{mesh @g needs devices of kind "gpu"; the topology has none}}
  pw.mesh @g ["x"=2] {kind = "gpu"}
  func.func @main() {
    return
  }
}

// -----

// Tests that bound meshes keep their devices, and that devices the
// topology lacks are reported.
module {
  // expected-error@+1 {{mesh @m is bound to device 42, which the topology lacks}}
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 42>}
  func.func @main() {
    return
  }
}

// -----

// Tests that a program not placed yet is refused before the pass runs: the
// runner checks the stage the pass requires (sharded).
// expected-error@+1 {{pw-lower-to-physical needs a sharded program (see the errors above)}}
module {
  pw.mesh @a ["x"=2]
  // expected-error@+1 {{program input #0 is not placed and sharded yet}}
  func.func @main(%x: !pw.array<8xf32>) -> !pw.array<8xf32> {
    return %x : !pw.array<8xf32>
  }
}
