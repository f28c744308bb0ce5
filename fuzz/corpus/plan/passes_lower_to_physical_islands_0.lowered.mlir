module {
  pw.mesh @a ["x"=4] {devices = array<i64: 0, 1, 2, 3>}
  pw.mesh @b ["x"=4] {devices = array<i64: 4, 5, 6, 7>}
  pw.mesh @near ["x"=2] {devices = array<i64: 0, 1>, same_island_as = @a}
  func.func @main(%arg0: !pw.array<8xf32, @a, [{"x"}]>) -> (!pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @near, [{"x"}]>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.gather %arg0 [#pw.piece<0 [0] -> 4 [0] size [2] intra_island>, #pw.piece<1 [0] -> 4 [2] size [2] intra_island>, #pw.piece<2 [0] -> 4 [4] size [2] intra_island>, #pw.piece<3 [0] -> 4 [6] size [2] intra_island>] : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %1 = pw.gather %arg0 [#pw.piece<0 [0] -> 5 [0] size [2] intra_island>, #pw.piece<1 [0] -> 5 [2] size [2] intra_island>, #pw.piece<2 [0] -> 5 [4] size [2] intra_island>, #pw.piece<3 [0] -> 5 [6] size [2] intra_island>] : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %2 = pw.gather %arg0 [#pw.piece<0 [0] -> 6 [0] size [2] intra_island>, #pw.piece<1 [0] -> 6 [2] size [2] intra_island>, #pw.piece<2 [0] -> 6 [4] size [2] intra_island>, #pw.piece<3 [0] -> 6 [6] size [2] intra_island>] : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %3 = pw.gather %arg0 [#pw.piece<0 [0] -> 7 [0] size [2] intra_island>, #pw.piece<1 [0] -> 7 [2] size [2] intra_island>, #pw.piece<2 [0] -> 7 [4] size [2] intra_island>, #pw.piece<3 [0] -> 7 [6] size [2] intra_island>] : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %4 = pw.gather %arg0 [#pw.piece<2 [0] -> 1 [0] size [2] intra_island>, #pw.piece<3 [0] -> 1 [2] size [2] intra_island>] : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @near, [{"x"}]>
    %5 = pw.gather %arg0 [#pw.piece<0 [0] -> 0 [0] size [2] same_device>, #pw.piece<1 [0] -> 0 [2] size [2] intra_island>] : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @near, [{"x"}]>
    %6 = pw.assemble %0, %1, %2, %3 : !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @b, [{}]> -> !pw.array<8xf32, @b, [{}]>
    %7 = pw.assemble %5, %4 : !pw.array<8xf32, @near, [{"x"}]>, !pw.array<8xf32, @near, [{"x"}]> -> !pw.array<8xf32, @near, [{"x"}]>
    return %6, %7 : !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @near, [{"x"}]>
  }
}
