// Tests that a mesh is not constrained to its own island.
module {
  // expected-error@+1 {{mesh @m cannot be on the same island as itself}}
  pw.mesh @m ["x"=2] {same_island_as = @m}
  func.func @main() {
    return
  }
}
