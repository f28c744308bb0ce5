module @rl_step {
  pw.mesh @sampler ["x"=2]
  pw.mesh @reward ["x"=1]
  pw.mesh @trainer ["x"=2]
  "builtin.module"() <{sym_name = "jit_sampler"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], function_type = (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<16x8xf32>, %arg1: tensor<8x16xf32>):
      %0 = "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %16 = "stablehlo.maximum"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%16) : (tensor<f32>) -> ()
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
      "func.return"(%14) : (tensor<8x8xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_reward_model"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], function_type = (tensor<24x4xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<24x4xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<8x8xf32>):
      %0 = "stablehlo.concatenate"(%arg1, %arg2) <{dimension = 1 : i64}> : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
      %1 = "stablehlo.dot_general"(%0, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x24xf32>, tensor<24x4xf32>) -> tensor<8x4xf32>
      %2 = "stablehlo.tanh"(%1) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.reduce"(%2, %3) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %5 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%5) : (tensor<f32>) -> ()
      }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
      "func.return"(%4) : (tensor<8xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_trainer"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<16x8xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg12: tensor<16x8xf32>, %arg13: tensor<8x16xf32>, %arg14: tensor<8x8xf32>, %arg15: tensor<8xf32>):
      %29 = "stablehlo.dot_general"(%arg13, %arg12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
      %30:3 = "func.call"(%29) <{callee = @log_softmax}> : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x1xf32>)
      %31 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %32 = "stablehlo.reduce"(%arg15, %31) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg20: tensor<f32>, %arg21: tensor<f32>):
        %63 = "stablehlo.add"(%arg20, %arg21) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%63) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      %33 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %34 = "stablehlo.divide"(%32, %33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %35 = "stablehlo.broadcast_in_dim"(%34) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %36 = "stablehlo.subtract"(%arg15, %35) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %37 = "stablehlo.multiply"(%arg14, %30#0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %38 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %39 = "stablehlo.reduce"(%37, %38) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg18: tensor<f32>, %arg19: tensor<f32>):
        %62 = "stablehlo.add"(%arg18, %arg19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%62) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %40 = "stablehlo.multiply"(%36, %39) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %41 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %42 = "stablehlo.reduce"(%40, %41) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
        %61 = "stablehlo.add"(%arg16, %arg17) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%61) : (tensor<f32>) -> ()
      }) : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      %43 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %44 = "stablehlo.divide"(%42, %43) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %45 = "stablehlo.negate"(%44) : (tensor<f32>) -> tensor<f32>
      %46 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %47 = "stablehlo.negate"(%46) : (tensor<f32>) -> tensor<f32>
      %48 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %49 = "stablehlo.divide"(%47, %48) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %50 = "stablehlo.broadcast_in_dim"(%49) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %51 = "stablehlo.multiply"(%36, %50) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %52 = "stablehlo.broadcast_in_dim"(%51) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x8xf32>
      %53 = "stablehlo.multiply"(%arg14, %52) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %54 = "func.call"(%30#1, %30#2, %53) <{callee = @log_softmax_0}> : (tensor<8x8xf32>, tensor<8x1xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %55 = "stablehlo.dot_general"(%54, %arg13) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
      %56 = "stablehlo.transpose"(%55) <{permutation = array<i64: 1, 0>}> : (tensor<8x16xf32>) -> tensor<16x8xf32>
      %57 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %58 = "stablehlo.broadcast_in_dim"(%57) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x8xf32>
      %59 = "stablehlo.multiply"(%58, %56) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
      %60 = "stablehlo.subtract"(%arg12, %59) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
      "func.return"(%60) : (tensor<16x8xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x1xf32>), res_attrs = [{}, {}, {}], sym_name = "log_softmax", sym_visibility = "private"}> ({
    ^bb0(%arg7: tensor<8x8xf32>):
      %12 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %13 = "stablehlo.reduce"(%arg7, %12) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
        %28 = "stablehlo.maximum"(%arg10, %arg11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%28) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %14 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %16 = "stablehlo.maximum"(%15, %13) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %19 = "stablehlo.subtract"(%arg7, %18) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %20 = "stablehlo.exponential"(%19) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %21 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %22 = "stablehlo.reduce"(%20, %21) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
        %27 = "stablehlo.add"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%27) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %23 = "stablehlo.broadcast_in_dim"(%22) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %24 = "stablehlo.log"(%23) : (tensor<8x1xf32>) -> tensor<8x1xf32>
      %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %26 = "stablehlo.subtract"(%19, %25) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      "func.return"(%26, %20, %23) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<8x8xf32>, tensor<8x1xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>, res_attrs = [{}], sym_name = "log_softmax_0", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<8x8xf32>, %arg1: tensor<8x1xf32>, %arg2: tensor<8x8xf32>):
      %0 = "stablehlo.negate"(%arg2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
        %11 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%11) : (tensor<f32>) -> ()
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
      "func.return"(%9) : (tensor<8x8xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  func.func @main(%arg0: !pw.array<16x8xf32>, %arg1: !pw.array<24x4xf32>, %arg2: !pw.array<8x16xf32>, %arg3: !pw.array<8x16xf32>) -> (!pw.array<16x8xf32, @trainer>, !pw.array<8xf32, @reward>, !pw.array<8x8xf32, @sampler>) {
    %0 = pw.call @jit_sampler(%arg0, %arg2) on @sampler : (!pw.array<16x8xf32>, !pw.array<8x16xf32>) -> !pw.array<8x8xf32, @sampler>
    %1 = pw.call @jit_reward_model(%arg1, %arg2, %0) on @reward : (!pw.array<24x4xf32>, !pw.array<8x16xf32>, !pw.array<8x8xf32, @sampler>) -> !pw.array<8xf32, @reward>
    %2 = pw.call @jit_trainer(%arg0, %arg2, %0, %1) on @trainer : (!pw.array<16x8xf32>, !pw.array<8x16xf32>, !pw.array<8x8xf32, @sampler>, !pw.array<8xf32, @reward>) -> !pw.array<16x8xf32, @trainer>
    %3 = pw.call @jit_sampler(%2, %arg3) on @sampler : (!pw.array<16x8xf32, @trainer>, !pw.array<8x16xf32>) -> !pw.array<8x8xf32, @sampler>
    return %2, %1, %3 : !pw.array<16x8xf32, @trainer>, !pw.array<8xf32, @reward>, !pw.array<8x8xf32, @sampler>
  }
}
