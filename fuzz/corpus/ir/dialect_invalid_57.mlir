// Tests that pw.assemble fills each destination shard once.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %1 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    // expected-error@+1 {{pw.assemble writes the shard on device 1 2 times}}
    %2 = pw.assemble %0, %1 : !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
