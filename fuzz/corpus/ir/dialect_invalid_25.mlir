// Tests that a call's mesh exists.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is placed on unknown mesh @ghost}}
    %0 = pw.call @id(%x) on @ghost : (!pw.array<4xf32>) -> !pw.array<4xf32, @ghost>
    return
  }
}
