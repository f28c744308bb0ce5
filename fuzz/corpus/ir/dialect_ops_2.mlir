// Tests the physical form: rows split over @a become columns split over @b
// through two gathers; a replicated array is scattered; a copy moves a
// whole shard; pw.assemble joins the destination shards.
module {
  pw.mesh @a ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2] {devices = array<i64: 2, 3>}
  func.func @main(%r: !pw.array<4x8xf32, @a, [{"x"}, {}]>, %f: !pw.array<4x8xf32, @a, [{}, {}]>) -> (!pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{}, {}]>) {
    %0 = pw.gather %r [#pw.piece<0 [0, 0] -> 2 [0, 0] size [2, 4] intra_island>, #pw.piece<1 [0, 0] -> 2 [2, 0] size [2, 4] intra_island>] : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %1 = pw.gather %r [#pw.piece<0 [0, 4] -> 3 [0, 0] size [2, 4] intra_island>, #pw.piece<1 [0, 4] -> 3 [2, 0] size [2, 4] intra_island>] : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %2 = pw.assemble %0, %1 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{}, {"x"}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %3 = pw.scatter %f [#pw.piece<0 [0, 0] -> 2 [0, 0] size [2, 8] intra_island>, #pw.piece<0 [2, 0] -> 3 [0, 0] size [2, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %4 = pw.assemble %3 : !pw.array<4x8xf32, @b, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %5 = pw.copy %f [#pw.piece<0 [0, 0] -> 2 [0, 0] size [4, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{}, {}]>
    %6 = pw.copy %f [#pw.piece<1 [0, 0] -> 3 [0, 0] size [4, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{}, {}]>
    %7 = pw.assemble %5, %6 : !pw.array<4x8xf32, @b, [{}, {}]>, !pw.array<4x8xf32, @b, [{}, {}]> -> !pw.array<4x8xf32, @b, [{}, {}]>
    return %2, %4, %7 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{}, {}]>
  }
}
