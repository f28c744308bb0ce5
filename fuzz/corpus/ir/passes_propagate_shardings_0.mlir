// Tests that results take the computation's declared sharding, calls record
// what they expect, and inputs take their first consumer's expectation.
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %b: tensor<4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      return %a : tensor<8x4xf32>
    }
  }
  func.func @main(%x: !pw.array<8x4xf32>, %y: !pw.array<4xf32>) -> !pw.array<8x4xf32, @m> {
    %0 = pw.call @f(%x, %y) on @m : (!pw.array<8x4xf32>, !pw.array<4xf32>) -> !pw.array<8x4xf32, @m>
    return %0 : !pw.array<8x4xf32, @m>
  }
}
