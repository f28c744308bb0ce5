// Tests that a sharding names axes of its mesh.
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{axis "y" is not an axis of mesh ["x"=2]}}
  func.func @main(%x: !pw.array<4xf32, @m, [{"y"}]>) {
    return
  }
}
