// Tests that a mesh of more devices than pw supports is refused before
// anything is computed per device.
module {
  // expected-error@+1 {{mesh @m ["x"=1000000000] has more than 65536 devices}}
  pw.mesh @m ["x"=1000000000]
  func.func @main(%a: !pw.array<4xf32, @m, [{}]>) {
    return
  }
}
