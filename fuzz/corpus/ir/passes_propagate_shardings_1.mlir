// Tests that open Shardy dimensions read as their closed part, and that a
// computation without shardings is replicated.
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> tensor<8x4xf32> {
      return %a : tensor<8x4xf32>
    }
  }
  module @g attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
      return %a : tensor<8x4xf32>
    }
  }
  func.func @main(%x: !pw.array<8x4xf32>) -> !pw.array<8x4xf32, @m> {
    %0 = pw.call @f(%x) on @m : (!pw.array<8x4xf32>) -> !pw.array<8x4xf32, @m>
    %1 = pw.call @g(%0) on @m : (!pw.array<8x4xf32, @m>) -> !pw.array<8x4xf32, @m>
    return %1 : !pw.array<8x4xf32, @m>
  }
}
