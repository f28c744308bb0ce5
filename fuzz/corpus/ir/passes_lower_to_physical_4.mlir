// Tests an unsatisfiable request: a mesh bigger than the island.
module {
  // expected-error@+1 {{mesh @huge needs 16 devices on one island; the largest such island has 8}}
  pw.mesh @huge ["x"=16]
  func.func @main() {
    return
  }
}
