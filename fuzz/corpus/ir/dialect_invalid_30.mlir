// Tests that an unplaced call has no in_shardings.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{an unplaced call cannot have in_shardings}}
    %0 = pw.call @id(%x) {in_shardings = [[[]]]} : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}
