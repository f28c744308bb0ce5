// Tests that a call's in_shardings must be what its computation declares:
// a lowered program that disagrees would hand the computation its shards
// in another layout than it was compiled for.
module {
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 1>}
  module @rows attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
      return %a : tensor<4x4xf32>
    }
  }
  func.func @main(%x: !pw.array<4x4xf32, @m, [{}, {"x"}]>) {
    // expected-error@+1 {{in_shardings #0 is [{}, {"x"}] but computation @rows takes argument #0 as [{"x"}, {}]}}
    %0 = pw.call @rows(%x) on @m {in_shardings = [[[], ["x"]]]} : (!pw.array<4x4xf32, @m, [{}, {"x"}]>) -> !pw.array<4x4xf32, @m, [{"x"}, {}]>
    return
  }
}
