// Tests that a reshard keeps the mesh.
module {
  pw.mesh @a []
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.reshard cannot move @a to @b; use pw.transfer}}
    %0 = pw.reshard %x : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
