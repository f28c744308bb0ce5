// Tests that an array's byte size is computed with overflow checks.
module {
  pw.mesh @a []
  // expected-error@+1 {{program input: !pw.array<4611686018427387904x4xf32, @a, [{}, {}]> has more than 2^63 bytes}}
  func.func @main(%x: !pw.array<4611686018427387904x4xf32, @a, [{}, {}]>) {
    return
  }
}
