// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-assign-devices --pw-propagate-shardings

// Tests that results take the computation's declared sharding, calls record
// what they expect, and inputs take their first consumer's expectation.
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %b: tensor<4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      return %a : tensor<8x4xf32>
    }
  }
  func.func @main(%x: !pw.array<8x4xf32>, %y: !pw.array<4xf32>) -> !pw.array<8x4xf32, @m> {
    %0 = pw.call @f(%x, %y) on @m : (!pw.array<8x4xf32>, !pw.array<4xf32>) -> !pw.array<8x4xf32, @m>
    return %0 : !pw.array<8x4xf32, @m>
  }
}

// -----

// Tests that open Shardy dimensions read as their closed part, and that a
// computation without shardings is replicated.
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> tensor<8x4xf32> {
      return %a : tensor<8x4xf32>
    }
  }
  module @g attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
      return %a : tensor<8x4xf32>
    }
  }
  func.func @main(%x: !pw.array<8x4xf32>) -> !pw.array<8x4xf32, @m> {
    %0 = pw.call @f(%x) on @m : (!pw.array<8x4xf32>) -> !pw.array<8x4xf32, @m>
    %1 = pw.call @g(%0) on @m : (!pw.array<8x4xf32, @m>) -> !pw.array<8x4xf32, @m>
    return %1 : !pw.array<8x4xf32, @m>
  }
}

// -----

// Tests that a result cannot claim another sharding than its computation
// produces (the verifier refuses it before the pass runs).
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
      return %a : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>) -> !pw.array<8xf32, @m, [{"x"}]> {
    // expected-error@+1 {{result #0 is sharded [{"x"}] but computation @f produces [{}]}}
    %0 = pw.call @f(%x) on @m : (!pw.array<8xf32>) -> !pw.array<8xf32, @m, [{"x"}]>
    return %0 : !pw.array<8xf32, @m, [{"x"}]>
  }
}

// -----

// Tests that a sharding that does not divide its array is refused before
// the pass runs.
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{the sharding [{"x"}] of result #0 (tensor<3xf32>) does not fit its mesh ["x"=2]}}
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<3xf32>) -> (tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
      return %a : tensor<3xf32>
    }
  }
  func.func @main(%x: !pw.array<3xf32>) -> !pw.array<3xf32, @m> {
    %0 = pw.call @f(%x) on @m : (!pw.array<3xf32>) -> !pw.array<3xf32, @m>
    return %0 : !pw.array<3xf32, @m>
  }
}
