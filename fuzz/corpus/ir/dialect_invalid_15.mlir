// Tests that sharded dimensions divide by their axes' sizes.
module {
  pw.mesh @m ["x"=2, "y"=3]
  // expected-error@+1 {{dimension 0 of size 4 is not divisible by 6 (axes ["x", "y"])}}
  func.func @main(%x: !pw.array<4xf32, @m, [{"x", "y"}]>) {
    return
  }
}
