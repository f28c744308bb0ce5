// Tests that link labels are known (the attribute's verifier).
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{unknown link 'carrier_pigeon'}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] carrier_pigeon>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
