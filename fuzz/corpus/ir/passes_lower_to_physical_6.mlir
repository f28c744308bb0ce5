// Tests that bound meshes keep their devices, and that devices the
// topology lacks are reported.
module {
  // expected-error@+1 {{mesh @m is bound to device 42, which the topology lacks}}
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 42>}
  func.func @main() {
    return
  }
}
