// Tests that the pieces of a gather fill its shard exactly once.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b []  {devices = array<i64: 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{the pieces of pw.gather must fill its destination shard exactly once}}
    %0 = pw.gather %x [#pw.piece<0 [0] -> 2 [0] size [3] intra_island>, #pw.piece<1 [2] -> 2 [2] size [2] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
