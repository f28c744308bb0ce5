// Tests that a device kind is not empty.
module {
  // expected-error@+1 {{mesh @m has an empty device kind}}
  pw.mesh @m ["x"=2] {kind = ""}
  func.func @main() {
    return
  }
}
