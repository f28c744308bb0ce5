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
