module {
  pw.mesh @one [] {devices = array<i64: 0>}
  pw.mesh @two ["x"=2] {devices = array<i64: 1, 2>}
  func.func @main(%arg0: !pw.array<6xf32, @one, [{}]>) -> (!pw.array<6xf32, @two, [{}]>, !pw.array<6xf32, @two, [{"x"}]>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.scatter %arg0 [#pw.piece<0 [0] -> 1 [0] size [6] intra_island>, #pw.piece<0 [0] -> 2 [0] size [6] intra_island>] : !pw.array<6xf32, @one, [{}]> -> !pw.array<6xf32, @two, [{}]>
    %1 = pw.scatter %arg0 [#pw.piece<0 [0] -> 1 [0] size [3] intra_island>, #pw.piece<0 [3] -> 2 [0] size [3] intra_island>] : !pw.array<6xf32, @one, [{}]> -> !pw.array<6xf32, @two, [{"x"}]>
    %2 = pw.assemble %0 : !pw.array<6xf32, @two, [{}]> -> !pw.array<6xf32, @two, [{}]>
    %3 = pw.assemble %1 : !pw.array<6xf32, @two, [{"x"}]> -> !pw.array<6xf32, @two, [{"x"}]>
    return %2, %3 : !pw.array<6xf32, @two, [{}]>, !pw.array<6xf32, @two, [{"x"}]>
  }
}
