// Tests that arrays are placed on declared meshes.
module {
  // expected-error@+1 {{program input is placed on unknown mesh @ghost}}
  func.func @main(%x: !pw.array<4xf32, @ghost>) {
    return
  }
}
