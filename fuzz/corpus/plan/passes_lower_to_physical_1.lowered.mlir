module {
  pw.mesh @a ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2] {devices = array<i64: 2, 3>}
  func.func @main(%arg0: !pw.array<0x4xf32, @a, [{}, {"x"}]>) -> !pw.array<0x4xf32, @b, [{"x"}, {}]> attributes {pw.schedule = "critical-path"} {
    %0 = pw.gather %arg0 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [0, 2] intra_island>, #pw.piece<1 [0, 0] -> 2 [0, 2] size [0, 2] intra_island>] : !pw.array<0x4xf32, @a, [{}, {"x"}]> -> !pw.array<0x4xf32, @b, [{"x"}, {}]>
    %1 = pw.gather %arg0 [#pw.piece<0 [0, 0] -> 3 [0, 0] size [0, 2] intra_island>, #pw.piece<1 [0, 0] -> 3 [0, 2] size [0, 2] intra_island>] : !pw.array<0x4xf32, @a, [{}, {"x"}]> -> !pw.array<0x4xf32, @b, [{"x"}, {}]>
    %2 = pw.assemble %0, %1 : !pw.array<0x4xf32, @b, [{"x"}, {}]>, !pw.array<0x4xf32, @b, [{"x"}, {}]> -> !pw.array<0x4xf32, @b, [{"x"}, {}]>
    return %2 : !pw.array<0x4xf32, @b, [{"x"}, {}]>
  }
}
