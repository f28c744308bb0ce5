// Tests that mesh sizes are multiplied with overflow checks: these axes
// multiply to 2 modulo 2^64, and the mesh is not a mesh of 2 devices.
module {
  // expected-error@+1 {{mesh @m ["x"=7, "y"=7905747460161236407, "z"=2] has more than 65536 devices}}
  pw.mesh @m ["x"=7, "y"=7905747460161236407, "z"=2]
  func.func @main(%a: !pw.array<4xf32, @m, [{}]>) {
    return
  }
}
