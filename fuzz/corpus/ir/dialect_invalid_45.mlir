// Tests that a piece writes a device holding a destination shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 writes device 0, which holds no shard of the destination}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 0 [0] size [4] same_device>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
