// Tests that identity moves vanish and unused moves are removed.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  func.func @main(%x: !pw.array<8xf32, @a, [{"x"}]>) -> !pw.array<8xf32, @a, [{"x"}]> {
    %0 = pw.reshard %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @a, [{"x"}]>
    %1 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{"x"}]>
    return %0 : !pw.array<8xf32, @a, [{"x"}]>
  }
}
