// Tests that physical copies need lowered meshes.
module {
  pw.mesh @a []
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{the source mesh @a has no devices; run lowering first}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
