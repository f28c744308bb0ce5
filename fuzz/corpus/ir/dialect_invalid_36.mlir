// Tests that a transfer changes the mesh.
module {
  pw.mesh @a ["x"=2]
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.transfer stays on mesh @a; use pw.reshard within a mesh}}
    %0 = pw.transfer %x : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @a, [{"x"}]>
    return
  }
}
