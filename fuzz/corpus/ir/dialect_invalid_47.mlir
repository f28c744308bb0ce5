// Tests that a piece lands where it was read from.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b []  {devices = array<i64: 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{piece #0 lands at a different position of the array than the one it reads}}
    %0 = pw.gather %x [#pw.piece<1 [0] -> 2 [0] size [2] intra_island>, #pw.piece<0 [0] -> 2 [2] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
