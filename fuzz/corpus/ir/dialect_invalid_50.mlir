// Tests that pw.copy fills one whole destination shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.copy moves exactly one piece, which fills a whole destination shard}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
