// RUN: pw-opt %s --split-input-file --verify-diagnostics --pw-schedule=policy=gpipe

// Tests the gpipe order of a two-stage training step over three
// microbatches (forward a, b; backward b, a per microbatch): on each stage
// every forward, then every backward; moves between stages as soon as they are ready.
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
    // expected-error@+1 {{pw-schedule{policy=gpipe} cannot order this program: the forward of microbatch 1 on @a comes next on its stage, but it needs the backward of microbatch 0 on @a, which the policy orders after it}}
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
  // expected-error@+1 {{pw-schedule{policy=gpipe} cannot order this program: no computation is called more than once on a mesh, so the program has no microbatches}}
  func.func @main(%w: !pw.array<4xf32, @a, [{}]>, %x: !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]> {
    %0 = pw.call @f(%w, %x) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    %1 = pw.call @g(%w, %0) on @a : (!pw.array<4xf32, @a, [{}]>, !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @a, [{}]>
    return %1 : !pw.array<4xf32, @a, [{}]>
  }
}

// -----

// Tests that gpipe orders a forward-only pipeline: every forward of
// stage a, while stage b follows.
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
