// Tests that a piece has the rank of the array.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 has rank 2 for an array of rank 1}}
    %0 = pw.copy %x [#pw.piece<0 [0, 0] -> 1 [0, 0] size [4, 1] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
