// Tests conflicting constraints: a GPU mesh on the island of a CPU mesh.
module {
  pw.mesh @c ["x"=2] {kind = "cpu"}
  // expected-error@+1 {{conflicting constraints: meshes @c, @g must share an island, but no island has 2 "cpu" devices for @c and 2 "gpu" devices for @g}}
  pw.mesh @g ["x"=2] {kind = "gpu", same_island_as = @c}
  func.func @main() {
    return
  }
}
