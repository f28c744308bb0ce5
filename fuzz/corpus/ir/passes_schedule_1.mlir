// Tests that a cycle introduced by hand is refused: a value used before it
// is defined does not dominate its use.
module {
  pw.mesh @a []
  module @f attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]> {
    // expected-error@+1 {{operand #1 does not dominate this use}}
    %0 = pw.call @f(%x, %1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    // expected-note@+1 {{operand defined here}}
    %1 = pw.call @f(%x, %0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %1 : !pw.array<4xf32, @a, [{}]>
  }
}
