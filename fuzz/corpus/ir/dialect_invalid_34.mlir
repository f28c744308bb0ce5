// Tests that a transfer moves placed arrays.
module {
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{pw.transfer moves placed arrays; both sides need a mesh}}
    %0 = pw.transfer %x : !pw.array<4xf32> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
