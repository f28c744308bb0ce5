// Tests that the pass needs placed calls.
module {
  module @f attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>) -> !pw.array<8xf32> {
    // expected-error@+1 {{pw-insert-transfers needs placed calls with in_shardings}}
    %0 = pw.call @f(%x) : (!pw.array<8xf32>) -> !pw.array<8xf32>
    return %0 : !pw.array<8xf32>
  }
}
