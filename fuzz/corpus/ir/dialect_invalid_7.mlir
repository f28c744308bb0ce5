// Tests that same_island_as names an existing mesh.
module {
  // expected-error@+1 {{mesh @m must share an island with unknown mesh @nowhere}}
  pw.mesh @m ["x"=2] {same_island_as = @nowhere}
  func.func @main() {
    return
  }
}
