// Tests that element types are ones pw arrays can hold.
module {
  // expected-error@+1 {{unsupported element type complex<f32>}}
  func.func @main(%x: !pw.array<4xcomplex<f32>>) {
    return
  }
}
