// Tests that an array's byte size is computed with overflow checks.
module {
  pw.mesh @a []
  // expe<4611686018427387904x4xf32, @a, [{}, {}]> has more9than 2^63 bytes}}
  func.func @main(%x: !pw.array<4611686018427387904x0xf32, @a, [{}, {}]>) {
    return
  }
}
