module {
  pw.mesh @a ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2] {devices = array<i64: 2, 3>}
  func.func @main(%arg0: !pw.array<4x8xf32, @a, [{"x"}, {}]>, %arg1: !pw.array<4x8xf32, @a, [{}, {}]>) -> (!pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{}, {}]>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.scatter %arg1 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [2, 8] intra_island>, #pw.piece<0 [2, 0] -> 3 [0, 0] size [2, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %1 = pw.copy %arg1 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [4, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{}, {}]>
    %2 = pw.copy %arg1 [#pw.piece<1 [0, 0] -> 3 [0, 0] size [4, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{}, {}]>
    %3 = pw.gather %arg0 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [2, 4] intra_island>, #pw.piece<1 [0, 0] -> 2 [2, 0] size [2, 4] intra_island>] : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %4 = pw.gather %arg0 [#pw.piece<0 [0, 4] -> 3 [0, 0] size [2, 4] intra_island>, #pw.piece<1 [0, 4] -> 3 [2, 0] size [2, 4] intra_island>] : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %5 = pw.assemble %3, %4 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{}, {"x"}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %6 = pw.assemble %0 : !pw.array<4x8xf32, @b, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %7 = pw.assemble %1, %2 : !pw.array<4x8xf32, @b, [{}, {}]>, !pw.array<4x8xf32, @b, [{}, {}]> -> !pw.array<4x8xf32, @b, [{}, {}]>
    return %5, %6, %7 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{}, {}]>
  }
}
