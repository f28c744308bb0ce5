// Tests that an unplaced call goes to the mesh holding most bytes of its
// operands: 128 bytes come from @a, 32 from @b.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  module @big attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main() -> tensor<32xf32> {
      %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<32xf32>}> : () -> tensor<32xf32>
      return %0 : tensor<32xf32>
    }
  }
  module @small attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main() -> tensor<8xf32> {
      %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<8xf32>}> : () -> tensor<8xf32>
      return %0 : tensor<8xf32>
    }
  }
  module @use attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<32xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
      return %y : tensor<8xf32>
    }
  }
  func.func @main() -> !pw.array<8xf32> {
    %0 = pw.call @big() on @a : () -> !pw.array<32xf32, @a>
    %1 = pw.call @small() on @b : () -> !pw.array<8xf32, @b>
    %2 = pw.call @use(%0, %1) : (!pw.array<32xf32, @a>, !pw.array<8xf32, @b>) -> !pw.array<8xf32>
    return %2 : !pw.array<8xf32>
  }
}
