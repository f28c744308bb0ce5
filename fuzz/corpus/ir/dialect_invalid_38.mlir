// Tests that values are defined before use: a cycle is a dominance error.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    // expected-error@+1 {{operand #0 does not dominate this use}}
    %0 = pw.call @id(%1) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    // expected-note@+1 {{operand defined here}}
    %1 = pw.call @id(%0) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}
