// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-insert-transfers

// Tests that a cross-mesh edge gets a pw.transfer, a same-mesh sharding
// change a pw.reshard, a matching edge nothing, and that every use gets its
// own move (pw-fold-transfers shares them).
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  module @g attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32, @a, [{}]>) -> (!pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @a, [{}]>, !pw.array<8xf32, @b, [{}]>) {
    %0 = pw.call @f(%x) on @b {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @b, [{}]>
    %1 = pw.call @f(%x) on @a {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @a, [{}]>
    %2 = pw.call @f(%x) on @b {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @b, [{}]>
    %3 = pw.call @g(%1) on @a {in_shardings = [[[]]]} : (!pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @a, [{}]>
    return %0, %3, %2 : !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @a, [{}]>, !pw.array<8xf32, @b, [{}]>
  }
}

// -----

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
