// Tests that mesh axis sizes are positive.
module {
  // expected-error@+1 {{axis "x" of mesh @m has size 0; sizes must be >= 1}}
  pw.mesh @m ["x"=0]
  func.func @main() {
    return
  }
}
