// Tests that a transfer moves sharded arrays.
module {
  pw.mesh @a []
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32, @a>) {
    // expected-error@+1 {{pw.transfer moves sharded arrays; both sides need a sharding}}
    %0 = pw.transfer %x : !pw.array<4xf32, @a> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}
