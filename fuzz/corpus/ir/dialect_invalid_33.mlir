// Tests that a transfer keeps the array type.
module {
  pw.mesh @a []
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.transfer changes the array type from tensor<4xf32> to tensor<8xf32>}}
    %0 = pw.transfer %x : !pw.array<4xf32, @a, [{}]> -> !pw.array<8xf32, @b, [{}]>
    return
  }
}
