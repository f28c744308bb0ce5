// Tests that a piece reads a device holding a source shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 reads device 7, which holds no shard of the source}}
    %0 = pw.copy %x [#pw.piece<7 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
