// Tests that pw.assemble joins physical copies only.
module {
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @b, [{}]>) {
    // expected-error@+1 {{part #0 of pw.assemble is not a pw.copy, pw.scatter or pw.gather}}
    %0 = pw.assemble %x : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
