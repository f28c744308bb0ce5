// Round trip of every op and type of the pw dialect, in the three stages a
// program goes through: location-agnostic, placed, physical.

// Tests that an unplaced program of one call parses and prints.
module {
  module @double attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) -> !pw.array<4xf32> {
    %0 = pw.call @double(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return %0 : !pw.array<4xf32>
  }
}
