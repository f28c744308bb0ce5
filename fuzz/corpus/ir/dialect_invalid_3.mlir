// Tests that mesh axis names are distinct.
module {
  // expected-error@+1 {{mesh @m repeats or has an empty axis name "x"}}
  pw.mesh @m ["x"=2, "x"=2]
  func.func @main() {
    return
  }
}
