// Tests that a sharding that does not divide its array is refused before
// the pass runs.
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{the sharding [{"x"}] of result #0 (tensor<3xf32>) does not fit its mesh ["x"=2]}}
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<3xf32>) -> (tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
      return %a : tensor<3xf32>
    }
  }
  func.func @main(%x: !pw.array<3xf32>) -> !pw.array<3xf32, @m> {
    %0 = pw.call @f(%x) on @m : (!pw.array<3xf32>) -> !pw.array<3xf32, @m>
    return %0 : !pw.array<3xf32, @m>
  }
}
