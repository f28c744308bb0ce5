// Tests that a result cannot claim another sharding than its computation
// produces (the verifier refuses it before the pass runs).
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
      return %a : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>) -> !pw.array<8xf32, @m, [{"x"}]> {
    // expected-error@+1 {{result #0 is sharded [{"x"}] but computation @f produces [{}]}}
    %0 = pw.call @f(%x) on @m : (!pw.array<8xf32>) -> !pw.array<8xf32, @m, [{"x"}]>
    return %0 : !pw.array<8xf32, @m, [{"x"}]>
  }
}
