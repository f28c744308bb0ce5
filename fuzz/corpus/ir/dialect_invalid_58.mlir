// Tests that a computation's declared shardings divide its arrays.
module {
  // expected-error@+1 {{computation @odd: the sharding [{"x"}] of argument #0 (tensor<3xf32>) does not fit its mesh ["x"=2]: dimension 0 of size 3 is not divisible by 2}}
  module @odd attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<3xf32> {
      return %a : tensor<3xf32>
    }
  }
  func.func @main() {
    return
  }
}
