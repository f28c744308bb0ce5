// Tests that a call's mesh has the axes its computation was lowered for.
module {
  pw.mesh @m ["y"=2]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{computation @id was lowered for mesh ["x"=2] but runs on mesh @m ["y"=2]}}
    %0 = pw.call @id(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}
