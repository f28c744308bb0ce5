// Tests that an array with no elements, sharded over one mesh and sent to
// another, still gets a piece for every destination shard (each empty),
// so every shard is written.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  func.func @main(%x: !pw.array<0x4xf32, @a, [{}, {"x"}]>) -> !pw.array<0x4xf32, @b, [{"x"}, {}]> {
    %0 = pw.transfer %x : !pw.array<0x4xf32, @a, [{}, {"x"}]> -> !pw.array<0x4xf32, @b, [{"x"}, {}]>
    return %0 : !pw.array<0x4xf32, @b, [{"x"}, {}]>
  }
}
