// Tests that a computation's partition count is bounded before meshes are
// made for it.
module {
  // expected-error@+1 {{computation @f has mhlo.num_partitions = 1000000000; it must be between 1 and 65536}}
  module @f attributes {mhlo.num_partitions = 1000000000 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}
