// Tests that a replicated destination gets a whole copy on each device,
// scattered from one source shard when the source is whole.
module {
  pw.mesh @one []
  pw.mesh @two ["x"=2]
  func.func @main(%x: !pw.array<6xf32, @one, [{}]>) -> (!pw.array<6xf32, @two, [{}]>, !pw.array<6xf32, @two, [{"x"}]>) {
    %0 = pw.transfer %x : !pw.array<6xf32, @one, [{}]> -> !pw.array<6xf32, @two, [{}]>
    %1 = pw.transfer %x : !pw.array<6xf32, @one, [{}]> -> !pw.array<6xf32, @two, [{"x"}]>
    return %0, %1 : !pw.array<6xf32, @two, [{}]>, !pw.array<6xf32, @two, [{"x"}]>
  }
}
