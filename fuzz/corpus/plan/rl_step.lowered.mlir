module @rl_step {
  pw.mesh @sampler ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @reward ["x"=1] {devices = array<i64: 2>}
  pw.mesh @trainer ["x"=2] {devices = array<i64: 0, 3>}
  module @jit_sampler attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0, 1>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
      %0 = "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %15 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%15) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %3 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %5 = "stablehlo.maximum"(%4, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %8 = "stablehlo.subtract"(%0, %7) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %9 = "stablehlo.exponential"(%8) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.reduce"(%9, %10) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %15 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%15) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %14 = "stablehlo.divide"(%9, %13) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      return %14 : tensor<8x8xf32>
    }
  }
  module @jit_reward_model attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 2>], pw.num_partitions = 1 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<24x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
      %0 = "stablehlo.concatenate"(%arg1, %arg2) <{dimension = 1 : i64}> : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
      %1 = "stablehlo.dot_general"(%0, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x24xf32>, tensor<24x4xf32>) -> tensor<8x4xf32>
      %2 = "stablehlo.tanh"(%1) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.reduce"(%2, %3) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %5 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%5) : (tensor<f32>) -> ()
      }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
      return %4 : tensor<8xf32>
    }
  }
  module @jit_trainer attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0, 3>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg3: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<16x8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
      %0 = "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
      %1:3 = call @log_softmax(%0) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x1xf32>)
      %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.reduce"(%arg3, %2) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %32 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%32) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      %4 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.divide"(%3, %4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %7 = "stablehlo.subtract"(%arg3, %6) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %8 = "stablehlo.multiply"(%arg2, %1#0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.reduce"(%8, %9) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %32 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%32) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %11 = "stablehlo.multiply"(%7, %10) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %13 = "stablehlo.reduce"(%11, %12) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %32 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%32) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      %14 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.divide"(%13, %14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %16 = "stablehlo.negate"(%15) : (tensor<f32>) -> tensor<f32>
      %17 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %18 = "stablehlo.negate"(%17) : (tensor<f32>) -> tensor<f32>
      %19 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %20 = "stablehlo.divide"(%18, %19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %22 = "stablehlo.multiply"(%7, %21) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %23 = "stablehlo.broadcast_in_dim"(%22) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x8xf32>
      %24 = "stablehlo.multiply"(%arg2, %23) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %25 = call @log_softmax_0(%1#1, %1#2, %24) : (tensor<8x8xf32>, tensor<8x1xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %26 = "stablehlo.dot_general"(%25, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
      %27 = "stablehlo.transpose"(%26) <{permutation = array<i64: 1, 0>}> : (tensor<8x16xf32>) -> tensor<16x8xf32>
      %28 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x8xf32>
      %30 = "stablehlo.multiply"(%29, %27) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
      %31 = "stablehlo.subtract"(%arg0, %30) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
      return %31 : tensor<16x8xf32>
    }
    func.func private @log_softmax(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x1xf32>) {
      %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
        %15 = "stablehlo.maximum"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%15) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %4 = "stablehlo.maximum"(%3, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %7 = "stablehlo.subtract"(%arg0, %6) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %8 = "stablehlo.exponential"(%7) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.reduce"(%8, %9) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
        %15 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%15) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %12 = "stablehlo.log"(%11) : (tensor<8x1xf32>) -> tensor<8x1xf32>
      %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %14 = "stablehlo.subtract"(%7, %13) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      return %14, %8, %11 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x1xf32>
    }
    func.func private @log_softmax_0(%arg0: tensor<8x8xf32>, %arg1: tensor<8x1xf32>, %arg2: tensor<8x8xf32>) -> tensor<8x8xf32> {
      %0 = "stablehlo.negate"(%arg2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %10 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%10) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %3 = "stablehlo.reshape"(%2) : (tensor<8xf32>) -> tensor<8x1xf32>
      %4 = "stablehlo.divide"(%3, %arg1) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
      %5 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %6 = "stablehlo.reduce"(%4, %5) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %10 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%10) : (tensor<f32>) -> ()
      }) : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
      %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x8xf32>
      %8 = "stablehlo.multiply"(%7, %arg0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %9 = "stablehlo.add"(%arg2, %8) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      return %9 : tensor<8x8xf32>
    }
  }
  func.func @main(%arg0: !pw.array<16x8xf32, @sampler, [{}, {"x"}]>, %arg1: !pw.array<24x4xf32, @reward, [{}, {}]>, %arg2: !pw.array<8x16xf32, @sampler, [{}, {}]>, %arg3: !pw.array<8x16xf32, @sampler, [{}, {}]>) -> (!pw.array<16x8xf32, @trainer, [{}, {}]>, !pw.array<8xf32, @reward, [{}]>, !pw.array<8x8xf32, @sampler, [{}, {}]>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.copy %arg2 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [8, 16] intra_island>] : !pw.array<8x16xf32, @sampler, [{}, {}]> -> !pw.array<8x16xf32, @reward, [{}, {}]>
    %1 = pw.gather %arg0 [#pw.piece<0 [0, 0] -> 3 [0, 0] size [16, 4] intra_island>, #pw.piece<1 [0, 0] -> 3 [0, 4] size [16, 4] intra_island>] : !pw.array<16x8xf32, @sampler, [{}, {"x"}]> -> !pw.array<16x8xf32, @trainer, [{}, {}]>
    %2 = pw.call @jit_sampler(%arg0, %arg2) on @sampler {in_shardings = [[[], ["x"]], [[], []]]} : (!pw.array<16x8xf32, @sampler, [{}, {"x"}]>, !pw.array<8x16xf32, @sampler, [{}, {}]>) -> !pw.array<8x8xf32, @sampler, [{}, {}]>
    %3 = pw.copy %2 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [8, 8] intra_island>] : !pw.array<8x8xf32, @sampler, [{}, {}]> -> !pw.array<8x8xf32, @reward, [{}, {}]>
    %4 = pw.gather %arg0 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [16, 4] same_device>, #pw.piece<1 [0, 0] -> 0 [0, 4] size [16, 4] intra_island>] : !pw.array<16x8xf32, @sampler, [{}, {"x"}]> -> !pw.array<16x8xf32, @trainer, [{}, {}]>
    %5 = pw.copy %arg2 [#pw.piece<1 [4, 0] -> 3 [0, 0] size [4, 16] intra_island>] : !pw.array<8x16xf32, @sampler, [{}, {}]> -> !pw.array<8x16xf32, @trainer, [{"x"}, {}]>
    %6 = pw.assemble %0 : !pw.array<8x16xf32, @reward, [{}, {}]> -> !pw.array<8x16xf32, @reward, [{}, {}]>
    %7 = pw.assemble %3 : !pw.array<8x8xf32, @reward, [{}, {}]> -> !pw.array<8x8xf32, @reward, [{}, {}]>
    %8 = pw.call @jit_reward_model(%arg1, %6, %7) on @reward {in_shardings = [[[], []], [[], []], [[], []]]} : (!pw.array<24x4xf32, @reward, [{}, {}]>, !pw.array<8x16xf32, @reward, [{}, {}]>, !pw.array<8x8xf32, @reward, [{}, {}]>) -> !pw.array<8xf32, @reward, [{}]>
    %9 = pw.copy %2 [#pw.piece<1 [4, 0] -> 3 [0, 0] size [4, 8] intra_island>] : !pw.array<8x8xf32, @sampler, [{}, {}]> -> !pw.array<8x8xf32, @trainer, [{"x"}, {}]>
    %10 = pw.scatter %8 [#pw.piece<2 [0] -> 0 [0] size [4] intra_island>, #pw.piece<2 [4] -> 3 [0] size [4] intra_island>] : !pw.array<8xf32, @reward, [{}]> -> !pw.array<8xf32, @trainer, [{"x"}]>
    %11 = pw.copy %arg2 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [4, 16] same_device>] : !pw.array<8x16xf32, @sampler, [{}, {}]> -> !pw.array<8x16xf32, @trainer, [{"x"}, {}]>
    %12 = pw.copy %2 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [4, 8] same_device>] : !pw.array<8x8xf32, @sampler, [{}, {}]> -> !pw.array<8x8xf32, @trainer, [{"x"}, {}]>
    %13 = pw.assemble %4, %1 : !pw.array<16x8xf32, @trainer, [{}, {}]>, !pw.array<16x8xf32, @trainer, [{}, {}]> -> !pw.array<16x8xf32, @trainer, [{}, {}]>
    %14 = pw.assemble %11, %5 : !pw.array<8x16xf32, @trainer, [{"x"}, {}]>, !pw.array<8x16xf32, @trainer, [{"x"}, {}]> -> !pw.array<8x16xf32, @trainer, [{"x"}, {}]>
    %15 = pw.assemble %12, %9 : !pw.array<8x8xf32, @trainer, [{"x"}, {}]>, !pw.array<8x8xf32, @trainer, [{"x"}, {}]> -> !pw.array<8x8xf32, @trainer, [{"x"}, {}]>
    %16 = pw.assemble %10 : !pw.array<8xf32, @trainer, [{"x"}]> -> !pw.array<8xf32, @trainer, [{"x"}]>
    %17 = pw.call @jit_trainer(%13, %14, %15, %16) on @trainer {in_shardings = [[[], []], [["x"], []], [["x"], []], [["x"]]]} : (!pw.array<16x8xf32, @trainer, [{}, {}]>, !pw.array<8x16xf32, @trainer, [{"x"}, {}]>, !pw.array<8x8xf32, @trainer, [{"x"}, {}]>, !pw.array<8xf32, @trainer, [{"x"}]>) -> !pw.array<16x8xf32, @trainer, [{}, {}]>
    %18 = pw.copy %17 [#pw.piece<3 [0, 4] -> 1 [0, 0] size [16, 4] intra_island>] : !pw.array<16x8xf32, @trainer, [{}, {}]> -> !pw.array<16x8xf32, @sampler, [{}, {"x"}]>
    %19 = pw.copy %17 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [16, 4] same_device>] : !pw.array<16x8xf32, @trainer, [{}, {}]> -> !pw.array<16x8xf32, @sampler, [{}, {"x"}]>
    %20 = pw.assemble %19, %18 : !pw.array<16x8xf32, @sampler, [{}, {"x"}]>, !pw.array<16x8xf32, @sampler, [{}, {"x"}]> -> !pw.array<16x8xf32, @sampler, [{}, {"x"}]>
    %21 = pw.call @jit_sampler(%20, %arg3) on @sampler {in_shardings = [[[], ["x"]], [[], []]]} : (!pw.array<16x8xf32, @sampler, [{}, {"x"}]>, !pw.array<8x16xf32, @sampler, [{}, {}]>) -> !pw.array<8x8xf32, @sampler, [{}, {}]>
    return %17, %8, %21 : !pw.array<16x8xf32, @trainer, [{}, {}]>, !pw.array<8xf32, @reward, [{}]>, !pw.array<8x8xf32, @sampler, [{}, {}]>
  }
}
