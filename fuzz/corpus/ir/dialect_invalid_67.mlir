// Tests that a computation's Shardy mesh is bounded like pw's meshes.
module {
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    // expected-error@+1 {{cannot read sdy.mesh: mesh ["x"=4294967296, "y"=4294967296] has an axis below size 1 or more than 65536 devices}}
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4294967296, "y"=4294967296]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}
