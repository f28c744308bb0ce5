// Tests that a piece stays inside its shards.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b []  {devices = array<i64: 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{piece #0 reaches outside its source or destination shard}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 2 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
