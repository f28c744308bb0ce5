// Tests the tie rule: with no operand on any mesh, calls go to the least
// loaded fitting mesh, first declared first.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  pw.mesh @solo []
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>, %y: !pw.array<8xf32>) -> (!pw.array<8xf32>, !pw.array<8xf32>) {
    %0 = pw.call @f(%x) : (!pw.array<8xf32>) -> !pw.array<8xf32>
    %1 = pw.call @f(%y) : (!pw.array<8xf32>) -> !pw.array<8xf32>
    return %0, %1 : !pw.array<8xf32>, !pw.array<8xf32>
  }
}
