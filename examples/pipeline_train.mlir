module @pipeline_train {
  pw.mesh @stage0 ["x"=1]
  pw.mesh @stage1 ["x"=1]
  pw.mesh @stage2 ["x"=1]
  pw.mesh @stage3 ["x"=1]
  "builtin.module"() <{sym_name = "jit_stage_forward"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], function_type = (tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<64x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<128x64xf32>):
      %0 = "stablehlo.dot_general"(%arg2, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<64xf32>) -> tensor<1x64xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x64xf32>) -> tensor<128x64xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%4) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_last_stage_backward"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], function_type = (tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) -> (tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, []>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {jax.result_info = "result[3]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<64x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<128x64xf32>, %arg3: tensor<128x64xf32>):
      %0 = "stablehlo.dot_general"(%arg2, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<64xf32>) -> tensor<1x64xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x64xf32>) -> tensor<128x64xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %4 = "stablehlo.subtract"(%3, %arg3) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %5 = "stablehlo.multiply"(%4, %4) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %6 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %8 = "stablehlo.multiply"(%7, %4) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.reduce"(%5, %9) <{dimensions = array<i64: 0, 1>}> ({
      ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
        %28 = "stablehlo.add"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%28) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<f32>
      %11 = "stablehlo.constant"() <{value = dense<8.192000e+03> : tensor<f32>}> : () -> tensor<f32>
      %12 = "stablehlo.divide"(%10, %11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %13 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %14 = "stablehlo.constant"() <{value = dense<8.192000e+03> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.divide"(%13, %14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %17 = "stablehlo.multiply"(%16, %8) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %18 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %19 = "stablehlo.reduce"(%17, %18) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
        %27 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%27) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<64xf32>
      %20 = "stablehlo.reshape"(%19) : (tensor<64xf32>) -> tensor<1x64xf32>
      %21 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %22 = "stablehlo.reduce"(%20, %21) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %26 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%26) : (tensor<f32>) -> ()
      }) : (tensor<1x64xf32>, tensor<f32>) -> tensor<64xf32>
      %23 = "stablehlo.dot_general"(%17, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
      %24 = "stablehlo.transpose"(%23) <{permutation = array<i64: 1, 0>}> : (tensor<64x64xf32>) -> tensor<64x64xf32>
      %25 = "stablehlo.dot_general"(%17, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
      "func.return"(%12, %24, %22, %25) : (tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_stage_backward"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], function_type = (tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<64x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<128x64xf32>, %arg3: tensor<128x64xf32>):
      %0 = "stablehlo.dot_general"(%arg2, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<64xf32>) -> tensor<1x64xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x64xf32>) -> tensor<128x64xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %5 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %7 = "stablehlo.subtract"(%6, %4) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %8 = "stablehlo.multiply"(%arg3, %7) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %9 = "stablehlo.multiply"(%8, %4) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %10 = "stablehlo.add"(%8, %9) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
        %20 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%20) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<64xf32>
      %13 = "stablehlo.reshape"(%12) : (tensor<64xf32>) -> tensor<1x64xf32>
      %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.reduce"(%13, %14) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %19 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%19) : (tensor<f32>) -> ()
      }) : (tensor<1x64xf32>, tensor<f32>) -> tensor<64xf32>
      %16 = "stablehlo.dot_general"(%10, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
      %17 = "stablehlo.transpose"(%16) <{permutation = array<i64: 1, 0>}> : (tensor<64x64xf32>) -> tensor<64x64xf32>
      %18 = "stablehlo.dot_general"(%10, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
      "func.return"(%17, %15, %18) : (tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_accumulate"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<64x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64xf32>):
      %0 = "stablehlo.add"(%arg0, %arg2) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %1 = "stablehlo.add"(%arg1, %arg3) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      "func.return"(%0, %1) : (tensor<64x64xf32>, tensor<64xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_sgd"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<64x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64xf32>):
      %0 = "stablehlo.constant"() <{value = dense<1.250000e-02> : tensor<f32>}> : () -> tensor<f32>
      %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x64xf32>
      %2 = "stablehlo.multiply"(%1, %arg2) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %3 = "stablehlo.subtract"(%arg0, %2) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %4 = "stablehlo.constant"() <{value = dense<1.250000e-02> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
      %6 = "stablehlo.multiply"(%5, %arg3) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      %7 = "stablehlo.subtract"(%arg1, %6) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      "func.return"(%3, %7) : (tensor<64x64xf32>, tensor<64xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  func.func @main(%arg0: !pw.array<128x64xf32>, %arg1: !pw.array<128x64xf32>, %arg2: !pw.array<128x64xf32>, %arg3: !pw.array<128x64xf32>, %arg4: !pw.array<128x64xf32>, %arg5: !pw.array<128x64xf32>, %arg6: !pw.array<128x64xf32>, %arg7: !pw.array<128x64xf32>, %arg8: !pw.array<128x64xf32>, %arg9: !pw.array<128x64xf32>, %arg10: !pw.array<128x64xf32>, %arg11: !pw.array<128x64xf32>, %arg12: !pw.array<128x64xf32>, %arg13: !pw.array<128x64xf32>, %arg14: !pw.array<128x64xf32>, %arg15: !pw.array<128x64xf32>, %arg16: !pw.array<64x64xf32>, %arg17: !pw.array<64xf32>, %arg18: !pw.array<64x64xf32>, %arg19: !pw.array<64xf32>, %arg20: !pw.array<64x64xf32>, %arg21: !pw.array<64xf32>, %arg22: !pw.array<64x64xf32>, %arg23: !pw.array<64xf32>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>) {
    %0 = pw.call @jit_stage_forward(%arg16, %arg17, %arg0) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %1 = pw.call @jit_stage_forward(%arg18, %arg19, %0) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %2 = pw.call @jit_stage_forward(%arg20, %arg21, %1) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %3:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %2, %arg8) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %4:3 = pw.call @jit_stage_backward(%arg20, %arg21, %1, %3#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %5:3 = pw.call @jit_stage_backward(%arg18, %arg19, %0, %4#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %6:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg0, %5#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %7 = pw.call @jit_stage_forward(%arg16, %arg17, %arg1) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %8 = pw.call @jit_stage_forward(%arg18, %arg19, %7) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %9 = pw.call @jit_stage_forward(%arg20, %arg21, %8) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %10:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %9, %arg9) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %11:2 = pw.call @jit_accumulate(%3#1, %3#2, %10#1, %10#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %12:3 = pw.call @jit_stage_backward(%arg20, %arg21, %8, %10#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %13:2 = pw.call @jit_accumulate(%4#0, %4#1, %12#0, %12#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %14:3 = pw.call @jit_stage_backward(%arg18, %arg19, %7, %12#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %15:2 = pw.call @jit_accumulate(%5#0, %5#1, %14#0, %14#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %16:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg1, %14#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %17:2 = pw.call @jit_accumulate(%6#0, %6#1, %16#0, %16#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %18 = pw.call @jit_stage_forward(%arg16, %arg17, %arg2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %19 = pw.call @jit_stage_forward(%arg18, %arg19, %18) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %20 = pw.call @jit_stage_forward(%arg20, %arg21, %19) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %21:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %20, %arg10) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %22:2 = pw.call @jit_accumulate(%11#0, %11#1, %21#1, %21#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %23:3 = pw.call @jit_stage_backward(%arg20, %arg21, %19, %21#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %24:2 = pw.call @jit_accumulate(%13#0, %13#1, %23#0, %23#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %25:3 = pw.call @jit_stage_backward(%arg18, %arg19, %18, %23#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %26:2 = pw.call @jit_accumulate(%15#0, %15#1, %25#0, %25#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %27:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg2, %25#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %28:2 = pw.call @jit_accumulate(%17#0, %17#1, %27#0, %27#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %29 = pw.call @jit_stage_forward(%arg16, %arg17, %arg3) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %30 = pw.call @jit_stage_forward(%arg18, %arg19, %29) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %31 = pw.call @jit_stage_forward(%arg20, %arg21, %30) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %32:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %31, %arg11) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %33:2 = pw.call @jit_accumulate(%22#0, %22#1, %32#1, %32#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %34:3 = pw.call @jit_stage_backward(%arg20, %arg21, %30, %32#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %35:2 = pw.call @jit_accumulate(%24#0, %24#1, %34#0, %34#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %36:3 = pw.call @jit_stage_backward(%arg18, %arg19, %29, %34#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %37:2 = pw.call @jit_accumulate(%26#0, %26#1, %36#0, %36#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %38:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg3, %36#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %39:2 = pw.call @jit_accumulate(%28#0, %28#1, %38#0, %38#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %40 = pw.call @jit_stage_forward(%arg16, %arg17, %arg4) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %41 = pw.call @jit_stage_forward(%arg18, %arg19, %40) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %42 = pw.call @jit_stage_forward(%arg20, %arg21, %41) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %43:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %42, %arg12) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %44:2 = pw.call @jit_accumulate(%33#0, %33#1, %43#1, %43#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %45:3 = pw.call @jit_stage_backward(%arg20, %arg21, %41, %43#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %46:2 = pw.call @jit_accumulate(%35#0, %35#1, %45#0, %45#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %47:3 = pw.call @jit_stage_backward(%arg18, %arg19, %40, %45#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %48:2 = pw.call @jit_accumulate(%37#0, %37#1, %47#0, %47#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %49:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg4, %47#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %50:2 = pw.call @jit_accumulate(%39#0, %39#1, %49#0, %49#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %51 = pw.call @jit_stage_forward(%arg16, %arg17, %arg5) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %52 = pw.call @jit_stage_forward(%arg18, %arg19, %51) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %53 = pw.call @jit_stage_forward(%arg20, %arg21, %52) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %54:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %53, %arg13) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %55:2 = pw.call @jit_accumulate(%44#0, %44#1, %54#1, %54#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %56:3 = pw.call @jit_stage_backward(%arg20, %arg21, %52, %54#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %57:2 = pw.call @jit_accumulate(%46#0, %46#1, %56#0, %56#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %58:3 = pw.call @jit_stage_backward(%arg18, %arg19, %51, %56#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %59:2 = pw.call @jit_accumulate(%48#0, %48#1, %58#0, %58#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %60:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg5, %58#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %61:2 = pw.call @jit_accumulate(%50#0, %50#1, %60#0, %60#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %62 = pw.call @jit_stage_forward(%arg16, %arg17, %arg6) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %63 = pw.call @jit_stage_forward(%arg18, %arg19, %62) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %64 = pw.call @jit_stage_forward(%arg20, %arg21, %63) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %65:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %64, %arg14) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %66:2 = pw.call @jit_accumulate(%55#0, %55#1, %65#1, %65#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %67:3 = pw.call @jit_stage_backward(%arg20, %arg21, %63, %65#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %68:2 = pw.call @jit_accumulate(%57#0, %57#1, %67#0, %67#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %69:3 = pw.call @jit_stage_backward(%arg18, %arg19, %62, %67#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %70:2 = pw.call @jit_accumulate(%59#0, %59#1, %69#0, %69#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %71:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg6, %69#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %72:2 = pw.call @jit_accumulate(%61#0, %61#1, %71#0, %71#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %73 = pw.call @jit_stage_forward(%arg16, %arg17, %arg7) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>) -> !pw.array<128x64xf32, @stage0>
    %74 = pw.call @jit_stage_forward(%arg18, %arg19, %73) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>) -> !pw.array<128x64xf32, @stage1>
    %75 = pw.call @jit_stage_forward(%arg20, %arg21, %74) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>) -> !pw.array<128x64xf32, @stage2>
    %76:4 = pw.call @jit_last_stage_backward(%arg22, %arg23, %75, %arg15) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage2>, !pw.array<128x64xf32>) -> (!pw.array<f32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<128x64xf32, @stage3>)
    %77:2 = pw.call @jit_accumulate(%66#0, %66#1, %76#1, %76#2) on @stage3 : (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    %78:3 = pw.call @jit_stage_backward(%arg20, %arg21, %74, %76#3) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage1>, !pw.array<128x64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<128x64xf32, @stage2>)
    %79:2 = pw.call @jit_accumulate(%68#0, %68#1, %78#0, %78#1) on @stage2 : (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %80:3 = pw.call @jit_stage_backward(%arg18, %arg19, %73, %78#2) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32, @stage0>, !pw.array<128x64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<128x64xf32, @stage1>)
    %81:2 = pw.call @jit_accumulate(%70#0, %70#1, %80#0, %80#1) on @stage1 : (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %82:3 = pw.call @jit_stage_backward(%arg16, %arg17, %arg7, %80#2) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<128x64xf32>, !pw.array<128x64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<128x64xf32, @stage0>)
    %83:2 = pw.call @jit_accumulate(%72#0, %72#1, %82#0, %82#1) on @stage0 : (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %84:2 = pw.call @jit_sgd(%arg16, %arg17, %83#0, %83#1) on @stage0 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>) -> (!pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>)
    %85:2 = pw.call @jit_sgd(%arg18, %arg19, %81#0, %81#1) on @stage1 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>) -> (!pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>)
    %86:2 = pw.call @jit_sgd(%arg20, %arg21, %79#0, %79#1) on @stage2 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>) -> (!pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>)
    %87:2 = pw.call @jit_sgd(%arg22, %arg23, %77#0, %77#1) on @stage3 : (!pw.array<64x64xf32>, !pw.array<64xf32>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>) -> (!pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>)
    return %84#0, %84#1, %85#0, %85#1, %86#0, %86#1, %87#0, %87#1, %3#0, %10#0, %21#0, %32#0, %43#0, %54#0, %65#0, %76#0 : !pw.array<64x64xf32, @stage0>, !pw.array<64xf32, @stage0>, !pw.array<64x64xf32, @stage1>, !pw.array<64xf32, @stage1>, !pw.array<64x64xf32, @stage2>, !pw.array<64xf32, @stage2>, !pw.array<64x64xf32, @stage3>, !pw.array<64xf32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>, !pw.array<f32, @stage3>
  }
}
