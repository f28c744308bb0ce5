// Tests that a physical mesh lists one device per position.
module {
  // expected-error@+1 {{mesh @m has 3 devices but its axes need 2}}
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 1, 2>}
  func.func @main() {
    return
  }
}
