// Tests that a piece's link label agrees with its devices.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 0>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 is labelled cross_island but goes from device 0 to 0}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 0 [0] size [4] cross_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
