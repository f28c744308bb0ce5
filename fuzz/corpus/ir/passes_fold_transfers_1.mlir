// Tests that a chain collapses when the middle array has no other use, and
// that a chain back to the source's own type disappears entirely.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  pw.mesh @c ["x"=2]
  func.func @main(%x: !pw.array<8xf32, @a, [{"x"}]>) -> (!pw.array<8xf32, @c, [{}]>, !pw.array<8xf32, @a, [{"x"}]>) {
    %0 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{"x"}]>
    %1 = pw.transfer %0 : !pw.array<8xf32, @b, [{"x"}]> -> !pw.array<8xf32, @c, [{}]>
    %2 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %3 = pw.transfer %2 : !pw.array<8xf32, @b, [{}]> -> !pw.array<8xf32, @a, [{"x"}]>
    return %1, %3 : !pw.array<8xf32, @c, [{}]>, !pw.array<8xf32, @a, [{"x"}]>
  }
}
