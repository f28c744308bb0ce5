// Tests that a mesh whose device list is broken stops verification before
// the copies reading it are checked (their device positions would be
// wrong).
module {
  // expected-error@+1 {{mesh @a has 3 devices but its axes need 2}}
  pw.mesh @a ["x"=2] {devices = array<i64: 0, 1, 2>}
  pw.mesh @b [] {devices = array<i64: 3>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    %0 = pw.gather %x [#pw.piece<2 [0] -> 3 [0] size [2] intra_island>, #pw.piece<1 [0] -> 3 [2] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
    %1 = pw.assemble %0 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
