// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-schedule=policy=1f1b

// Tests the 1f1b order of a two-stage training step over three
// microbatches (forward a, b; backward b, a per microbatch): on each stage
// one forward and one backward in turn after a warm-up; moves between stages as soon as they are ready.
module {
  pw.mesh @a []
  pw.mesh @b []
  module @fwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @fwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  func.func @main(%wa: !pw.array<4xf32, @a, [{}]>, %wb: !pw.array<4xf32, @b, [{}]>, %x0: !pw.array<4xf32, @a, [{}]>, %x1: !pw.array<4xf32, @a, [{}]>, %x2: !pw.array<4xf32, @a, [{}]>) -> (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) {
    %h0 = pw.call @fwd_a(%wa, %x0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t0 = pw.transfer %h0 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y0 = pw.call @fwd_b(%wb, %t0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g0 = pw.call @bwd_b(%wb, %t0, %y0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u0 = pw.transfer %g0 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d0 = pw.call @bwd_a(%wa, %x0, %u0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %h1 = pw.call @fwd_a(%wa, %x1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t1 = pw.transfer %h1 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y1 = pw.call @fwd_b(%wb, %t1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g1 = pw.call @bwd_b(%wb, %t1, %y1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u1 = pw.transfer %g1 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d1 = pw.call @bwd_a(%wa, %x1, %u1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %h2 = pw.call @fwd_a(%wa, %x2) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t2 = pw.transfer %h2 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y2 = pw.call @fwd_b(%wb, %t2) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g2 = pw.call @bwd_b(%wb, %t2, %y2) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u2 = pw.transfer %g2 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d2 = pw.call @bwd_a(%wa, %x2, %u2) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %d0, %d1, %d2 : !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>
  }
}

// -----

// Tests that a program whose later microbatch needs an earlier one's
// backward (through a call made once) cannot be ordered by the policy.
module {
  pw.mesh @a []
  pw.mesh @b []
  module @fwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @fwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @refresh attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>) -> tensor<4xf32> {
      return %a0 : tensor<4xf32>
    }
  }
  func.func @main(%wa: !pw.array<4xf32, @a, [{}]>, %wb: !pw.array<4xf32, @b, [{}]>, %x0: !pw.array<4xf32, @a, [{}]>, %x1: !pw.array<4xf32, @a, [{}]>) -> (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) {
    %h0 = pw.call @fwd_a(%wa, %x0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t0 = pw.transfer %h0 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y0 = pw.call @fwd_b(%wb, %t0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g0 = pw.call @bwd_b(%wb, %t0, %y0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u0 = pw.transfer %g0 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d0 = pw.call @bwd_a(%wa, %x0, %u0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %r1 = pw.call @refresh(%d0) on @a : (!pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    // expected-error@+1 {{pw-schedule{policy=1f1b} cannot order this program: the forward of microbatch 1 on @a comes next on its stage, but it needs the backward of microbatch 0 on @a, which the policy orders after it}}
    %h1 = pw.call @fwd_a(%wa, %r1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t1 = pw.transfer %h1 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y1 = pw.call @fwd_b(%wb, %t1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g1 = pw.call @bwd_b(%wb, %t1, %y1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u1 = pw.transfer %g1 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d1 = pw.call @bwd_a(%wa, %x1, %u1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %d0, %d1 : !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>
  }
}

// -----

// Tests that a program without microbatches (no computation called twice
// on a mesh) is refused at @main.
module {
  pw.mesh @a []
  module @f attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @g attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  // expected-error@+1 {{pw-schedule{policy=1f1b} cannot order this program: no computation is called more than once on a mesh, so the program has no microbatches}}
  func.func @main(%w: !pw.array<4xf32, @a, [{}]>, %x: !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]> {
    %0 = pw.call @f(%w, %x) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %1 = pw.call @g(%w, %0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %1 : !pw.array<4xf32, @a, [{}]>
  }
}

// -----

// Tests that 1f1b refuses a forward-only pipeline (gpipe orders it).
module {
  pw.mesh @a []
  pw.mesh @b []
  module @fwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @fwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  // expected-error@+1 {{pw-schedule{policy=1f1b} cannot order this program: it needs a backward pass, and no call reads its microbatch's data back from a later stage (for a forward-only pipeline, use gpipe)}}
  func.func @main(%wa: !pw.array<4xf32, @a, [{}]>, %wb: !pw.array<4xf32, @b, [{}]>, %x0: !pw.array<4xf32, @a, [{}]>, %x1: !pw.array<4xf32, @a, [{}]>) -> (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) {
    %h0 = pw.call @fwd_a(%wa, %x0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t0 = pw.transfer %h0 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y0 = pw.call @fwd_b(%wb, %t0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %h1 = pw.call @fwd_a(%wa, %x1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t1 = pw.transfer %h1 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y1 = pw.call @fwd_b(%wb, %t1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    return %y0, %y1 : !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>
  }
}

// -----

// Tests that two gradient sums of one computation on a stage (the weight's
// and another's) are sums, not links between microbatches: three
// microbatches in the 1F1B order.
module {
  pw.mesh @a []
  pw.mesh @b []
  module @fwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_a attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @fwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_b attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @add attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  func.func @main(%wa: !pw.array<4xf32, @a, [{}]>, %wb: !pw.array<4xf32, @b, [{}]>, %x0: !pw.array<4xf32, @a, [{}]>, %x1: !pw.array<4xf32, @a, [{}]>, %x2: !pw.array<4xf32, @a, [{}]>) -> (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) {
    %h0 = pw.call @fwd_a(%wa, %x0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t0 = pw.transfer %h0 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y0 = pw.call @fwd_b(%wb, %t0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g0 = pw.call @bwd_b(%wb, %t0, %y0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u0 = pw.transfer %g0 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d0 = pw.call @bwd_a(%wa, %x0, %u0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %h1 = pw.call @fwd_a(%wa, %x1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t1 = pw.transfer %h1 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y1 = pw.call @fwd_b(%wb, %t1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g1 = pw.call @bwd_b(%wb, %t1, %y1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u1 = pw.transfer %g1 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d1 = pw.call @bwd_a(%wa, %x1, %u1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %s1 = pw.call @add(%d0, %d1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %v1 = pw.call @add(%u0, %u1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %h2 = pw.call @fwd_a(%wa, %x2) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t2 = pw.transfer %h2 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y2 = pw.call @fwd_b(%wb, %t2) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g2 = pw.call @bwd_b(%wb, %t2, %y2) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u2 = pw.transfer %g2 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d2 = pw.call @bwd_a(%wa, %x2, %u2) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %s2 = pw.call @add(%s1, %d2) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %v2 = pw.call @add(%v1, %u2) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %s2, %v2 : !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>
  }
}

// -----

// Tests that two replicas of a two-stage pipeline have their stages at the
// same positions: each first stage warms up with one forward.
module {
  pw.mesh @a []
  pw.mesh @b []
  pw.mesh @c []
  pw.mesh @d []
  module @fwd attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @fwd_last attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @bwd_last attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  func.func @main(%w: !pw.array<4xf32, @a, [{}]>, %v: !pw.array<4xf32, @b, [{}]>, %w2: !pw.array<4xf32, @c, [{}]>, %v2: !pw.array<4xf32, @d, [{}]>, %x0: !pw.array<4xf32, @a, [{}]>, %x1: !pw.array<4xf32, @a, [{}]>, %x2: !pw.array<4xf32, @c, [{}]>, %x3: !pw.array<4xf32, @c, [{}]>) -> (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>) {
    %h0 = pw.call @fwd(%w, %x0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t0 = pw.transfer %h0 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y0 = pw.call @fwd_last(%v, %t0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g0 = pw.call @bwd_last(%v, %t0, %y0) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u0 = pw.transfer %g0 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d0 = pw.call @bwd(%w, %x0, %u0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %h1 = pw.call @fwd(%w, %x1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %t1 = pw.transfer %h1 : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %y1 = pw.call @fwd_last(%v, %t1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %g1 = pw.call @bwd_last(%v, %t1, %y1) on @b : (!pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]>) -> !pw.array<4xf32, @b, [{}]>
    %u1 = pw.transfer %g1 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @a, [{}]>
    %d1 = pw.call @bwd(%w, %x1, %u1) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %h2 = pw.call @fwd(%w2, %x2) on @c : (!pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>) -> !pw.array<4xf32, @c, [{}]>
    %t2 = pw.transfer %h2 : !pw.array<4xf32, @c, [{}]> -> !pw.array<4xf32, @d, [{}]>
    %y2 = pw.call @fwd_last(%v2, %t2) on @d : (!pw.array<4xf32, @d, [{}]>, !pw.array<4xf32, @d, [{}]>) -> !pw.array<4xf32, @d, [{}]>
    %g2 = pw.call @bwd_last(%v2, %t2, %y2) on @d : (!pw.array<4xf32, @d, [{}]>, !pw.array<4xf32, @d, [{}]>, !pw.array<4xf32, @d, [{}]>) -> !pw.array<4xf32, @d, [{}]>
    %u2 = pw.transfer %g2 : !pw.array<4xf32, @d, [{}]> -> !pw.array<4xf32, @c, [{}]>
    %d2 = pw.call @bwd(%w2, %x2, %u2) on @c : (!pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>) -> !pw.array<4xf32, @c, [{}]>
    %h3 = pw.call @fwd(%w2, %x3) on @c : (!pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>) -> !pw.array<4xf32, @c, [{}]>
    %t3 = pw.transfer %h3 : !pw.array<4xf32, @c, [{}]> -> !pw.array<4xf32, @d, [{}]>
    %y3 = pw.call @fwd_last(%v2, %t3) on @d : (!pw.array<4xf32, @d, [{}]>, !pw.array<4xf32, @d, [{}]>) -> !pw.array<4xf32, @d, [{}]>
    %g3 = pw.call @bwd_last(%v2, %t3, %y3) on @d : (!pw.array<4xf32, @d, [{}]>, !pw.array<4xf32, @d, [{}]>, !pw.array<4xf32, @d, [{}]>) -> !pw.array<4xf32, @d, [{}]>
    %u3 = pw.transfer %g3 : !pw.array<4xf32, @d, [{}]> -> !pw.array<4xf32, @c, [{}]>
    %d3 = pw.call @bwd(%w2, %x3, %u3) on @c : (!pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>) -> !pw.array<4xf32, @c, [{}]>
    return %d0, %d1, %d2, %d3 : !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @c, [{}]>, !pw.array<4xf32, @c, [{}]>
  }
}
