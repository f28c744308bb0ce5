// RUN: pw-opt %s --split-input-file
// Round trip of every op and type of the pw dialect, in the three stages a
// program goes through: location-agnostic, placed, physical.

// Tests that an unplaced program of one call parses and prints.
module {
  module @double attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) -> !pw.array<4xf32> {
    %0 = pw.call @double(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return %0 : !pw.array<4xf32>
  }
}

// -----

// Tests meshes with constraints, placed and sharded arrays (as the
// computation declares them), scalars, bf16, i1 and multi-result calls.
module {
  pw.mesh @m ["x"=2, "y"=2] {kind = "cpu"}
  pw.mesh @n ["x"=4] {same_island_as = @m}
  pw.mesh @single []
  module @split attributes {mhlo.num_partitions = 4 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8x4xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> (tensor<8x4xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, tensor<i1> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
      %0 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      return %a, %0 : tensor<8x4xbf16>, tensor<i1>
    }
  }
  func.func @main(%x: !pw.array<8x4xbf16, @m, [{"x", "y"}, {}]>) -> (!pw.array<8x4xbf16, @m, [{"x"}, {"y"}]>, !pw.array<i1, @n, []>) {
    %0:2 = pw.call @split(%x) on @m {in_shardings = [[["x", "y"], []]]} : (!pw.array<8x4xbf16, @m, [{"x", "y"}, {}]>) -> (!pw.array<8x4xbf16, @m, [{"x"}, {"y"}]>, !pw.array<i1, @m, []>)
    %1 = pw.transfer %0#1 : !pw.array<i1, @m, []> -> !pw.array<i1, @n, []>
    return %0#0, %1 : !pw.array<8x4xbf16, @m, [{"x"}, {"y"}]>, !pw.array<i1, @n, []>
  }
}

// -----

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
