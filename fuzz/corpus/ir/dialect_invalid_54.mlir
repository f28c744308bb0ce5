// Tests that only pw.assemble uses the partial result of a copy.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @b, [{}]> {
    // expected-error@+1 {{the result of pw.copy is partial; only pw.assemble may use it}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return %0 : !pw.array<4xf32, @b, [{}]>
  }
}
