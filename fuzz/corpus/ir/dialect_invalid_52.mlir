// Tests that pw.gather writes one destination device.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2]  {devices = array<i64: 2, 3>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{pw.gather writes one destination device}}
    %0 = pw.gather %x [#pw.piece<0 [0] -> 2 [0] size [2] intra_island>, #pw.piece<1 [0] -> 3 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{"x"}]>
    return
  }
}
