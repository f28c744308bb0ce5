// Tests that a physical copy moves at least one piece.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.copy moves no pieces}}
    %0 = pw.copy %x [] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
