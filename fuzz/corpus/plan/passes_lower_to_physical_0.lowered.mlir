module {
  pw.mesh @a ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2] {devices = array<i64: 2, 3>, kind = "cpu"}
  module @f attributes {mhlo.num_partitions = 2 : i32, pw.device_assignments = [array<i64: 2, 3>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      return %arg0 : tensor<4x8xf32>
    }
  }
  func.func @main(%arg0: !pw.array<4x8xf32, @a, [{"x"}, {}]>, %arg1: !pw.array<4x8xf32, @a, [{}, {}]>) -> (!pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.gather %arg0 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [2, 4] intra_island>, #pw.piece<1 [0, 0] -> 2 [2, 0] size [2, 4] intra_island>] : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %1 = pw.gather %arg0 [#pw.piece<0 [0, 4] -> 3 [0, 0] size [2, 4] intra_island>, #pw.piece<1 [0, 4] -> 3 [2, 0] size [2, 4] intra_island>] : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %2 = pw.copy %arg1 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [2, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %3 = pw.copy %arg1 [#pw.piece<1 [2, 0] -> 3 [0, 0] size [2, 8] intra_island>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %4 = pw.assemble %0, %1 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @b, [{}, {"x"}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %5 = pw.call @f(%4) on @b {in_shardings = [[[], ["x"]]]} : (!pw.array<4x8xf32, @b, [{}, {"x"}]>) -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %6 = pw.copy %arg1 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [2, 8] same_device>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @a, [{"x"}, {}]>
    %7 = pw.copy %arg1 [#pw.piece<1 [2, 0] -> 1 [0, 0] size [2, 8] same_device>] : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @a, [{"x"}, {}]>
    %8 = pw.assemble %6, %7 : !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @a, [{"x"}, {}]>
    %9 = pw.assemble %2, %3 : !pw.array<4x8xf32, @b, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    return %5, %8, %9 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>
  }
}
