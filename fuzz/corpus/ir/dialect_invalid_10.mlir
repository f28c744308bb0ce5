// Tests that a physical mesh lists each device once.
module {
  // expected-error@+1 {{mesh @m lists a device twice or a negative device id}}
  pw.mesh @m ["x"=2] {devices = array<i64: 1, 1>}
  func.func @main() {
    return
  }
}
