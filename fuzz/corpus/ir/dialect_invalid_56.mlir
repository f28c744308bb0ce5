// Tests that pw.assemble fills every destination shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b ["x"=2]  {devices = array<i64: 1, 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{"x"}]>
    // expected-error@+1 {{pw.assemble leaves the shard on device 2 empty}}
    %1 = pw.assemble %0 : !pw.array<4xf32, @b, [{"x"}]> -> !pw.array<4xf32, @b, [{"x"}]>
    return
  }
}
