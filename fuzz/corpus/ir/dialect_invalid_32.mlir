// Tests that unreadable Shardy shardings are reported.
module {
  module @odd attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    // expected-error@+1 {{cannot read the sharding of argument #0}}
    func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}
