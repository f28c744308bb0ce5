// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-lower-to-physical=topology=%S/two_islands.toml

// Tests that meshes spread over islands by free devices, same_island_as
// keeps two meshes on one island, and pieces are labelled with the link
// they cross.
module {
  pw.mesh @a ["x"=4]
  pw.mesh @b ["x"=4]
  pw.mesh @near ["x"=2] {same_island_as = @a}
  func.func @main(%x: !pw.array<8xf32, @a, [{"x"}]>) -> (!pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @near, [{"x"}]>) {
    %0 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %1 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @near, [{"x"}]>
    return %0, %1 : !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @near, [{"x"}]>
  }
}

// -----

// Tests a device kind served by its own island.
module {
  pw.mesh @g ["x"=2] {kind = "gpu"}
  pw.mesh @c ["x"=2] {kind = "cpu"}
  func.func @main() {
    return
  }
}

// -----

// Tests conflicting constraints: a GPU mesh on the island of a CPU mesh.
module {
  pw.mesh @c ["x"=2] {kind = "cpu"}
  // expected-error@+1 {{conflicting constraints: meshes @c, @g must share an island, but no island has 2 "cpu" devices for @c and 2 "gpu" devices for @g}}
  pw.mesh @g ["x"=2] {kind = "gpu", same_island_as = @c}
  func.func @main() {
    return
  }
}
