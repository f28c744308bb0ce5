// RUN: pw-opt %s --split-input-file --pw-fold-transfers

// Tests that identity moves vanish and unused moves are removed.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  func.func @main(%x: !pw.array<8xf32, @a, [{"x"}]>) -> !pw.array<8xf32, @a, [{"x"}]> {
    %0 = pw.reshard %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @a, [{"x"}]>
    %1 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{"x"}]>
    return %0 : !pw.array<8xf32, @a, [{"x"}]>
  }
}

// -----

// Tests that a chain collapses when the middle array has no other use, and
// that a chain back to the source's own type disappears entirely.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  pw.mesh @c ["x"=2]
  func.func @main(%x: !pw.array<8xf32, @a, [{"x"}]>) -> (!pw.array<8xf32, @c, [{}]>, !pw.array<8xf32, @a, [{"x"}]>) {
    %0 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{"x"}]>
    %1 = pw.transfer %0 : !pw.array<8xf32, @b, [{"x"}]> -> !pw.array<8xf32, @c, [{}]>
    %2 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %3 = pw.transfer %2 : !pw.array<8xf32, @b, [{}]> -> !pw.array<8xf32, @a, [{"x"}]>
    return %1, %3 : !pw.array<8xf32, @c, [{}]>, !pw.array<8xf32, @a, [{"x"}]>
  }
}

// -----

// Tests that duplicate moves of one array are shared, and that a chain whose
// middle array is used elsewhere stays when its second hop is cheaper: the
// reshard from replicated to split within @b moves no bytes, as every
// position already holds the half it keeps.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %y: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32, @a, [{}]>) -> !pw.array<8xf32, @b, [{}]> {
    %0 = pw.transfer %x : !pw.array<8xf32, @a, [{}]> -> !pw.array<8xf32, @b, [{}]>
    %1 = pw.reshard %0 : !pw.array<8xf32, @b, [{}]> -> !pw.array<8xf32, @b, [{"x"}]>
    %2 = pw.transfer %x : !pw.array<8xf32, @a, [{}]> -> !pw.array<8xf32, @b, [{}]>
    %3 = pw.call @f(%1, %2) on @b {in_shardings = [[["x"]], [[]]]} : (!pw.array<8xf32, @b, [{"x"}]>, !pw.array<8xf32, @b, [{}]>) -> !pw.array<8xf32, @b, [{}]>
    return %3 : !pw.array<8xf32, @b, [{}]>
  }
}
