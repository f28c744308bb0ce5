module @partially_placed {
  pw.mesh @encoder ["x"=2]
  pw.mesh @decoder ["x"=2]
  "builtin.module"() <{sym_name = "jit_embed"}> ({
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<8xi32>, tensor<32x16xf32>) -> tensor<8x16xf32>, res_attrs = [{jax.result_info = "result[0]"}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg7: tensor<8xi32>, %arg8: tensor<32x16xf32>):
      %25 = "func.call"(%arg8, %arg7) <{callee = @_take}> : (tensor<32x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
      "func.return"(%25) : (tensor<8x16xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<32x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>, res_attrs = [{}], sym_name = "_take", sym_visibility = "private"}> ({
    ^bb0(%arg3: tensor<32x16xf32>, %arg4: tensor<8xi32>):
      %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8xi32>
      %3 = "stablehlo.compare"(%arg4, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
      %4 = "stablehlo.constant"() <{value = dense<32> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8xi32>
      %6 = "stablehlo.add"(%arg4, %5) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      %7 = "func.call"(%3, %6, %arg4) <{callee = @_where}> : (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi32>) -> tensor<8x1xi32>
      %9 = "stablehlo.constant"() <{value = dense<31> : tensor<1xi32>}> : () -> tensor<1xi32>
      %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x1xi32>
      %12 = "stablehlo.compare"(%8, %11) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
      %13 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1xi32>) -> tensor<1x1xi32>
      %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi32>) -> tensor<8x1xi32>
      %15 = "stablehlo.compare"(%8, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
      %16 = "stablehlo.and"(%12, %15) : (tensor<8x1xi1>, tensor<8x1xi1>) -> tensor<8x1xi1>
      %17 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %18 = "stablehlo.reduce"(%16, %17) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg5: tensor<i1>, %arg6: tensor<i1>):
        %24 = "stablehlo.and"(%arg5, %arg6) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%24) : (tensor<i1>) -> ()
      }) : (tensor<8x1xi1>, tensor<i1>) -> tensor<8xi1>
      %19 = "stablehlo.gather"(%arg3, %8) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<32x16xf32>, tensor<8x1xi32>) -> tensor<8x16xf32>
      %20 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi1>) -> tensor<8x16xi1>
      %21 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x16xf32>
      %23 = "stablehlo.select"(%20, %19, %22) : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
      "func.return"(%23) : (tensor<8x16xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<8xi1>, %arg1: tensor<8xi32>, %arg2: tensor<8xi32>):
      %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      "func.return"(%0) : (tensor<8xi32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_dense"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}], function_type = (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg1: tensor<8x16xf32>, %arg2: tensor<16x32xf32>):
      %3 = "stablehlo.dot_general"(%arg1, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %4 = "func.call"(%3) <{callee = @relu}> : (tensor<8x32xf32>) -> tensor<8x32xf32>
      "func.return"(%4) : (tensor<8x32xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x32xf32>) -> tensor<8x32xf32>, res_attrs = [{}], sym_name = "relu", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<8x32xf32>):
      %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x32xf32>
      %2 = "stablehlo.maximum"(%arg0, %1) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      "func.return"(%2) : (tensor<8x32xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_normalize"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}], function_type = (tensor<8x32xf32>) -> tensor<8x32xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<8x32xf32>):
      %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
        %13 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%13) : (tensor<f32>) -> ()
      }) : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
      %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %4 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1xf32>
      %6 = "stablehlo.divide"(%3, %5) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
      %7 = "stablehlo.constant"() <{value = dense<9.99999997E-7> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1xf32>
      %9 = "stablehlo.add"(%6, %8) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
      %10 = "stablehlo.sqrt"(%9) : (tensor<8x1xf32>) -> tensor<8x1xf32>
      %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x32xf32>
      %12 = "stablehlo.divide"(%arg0, %11) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      "func.return"(%12) : (tensor<8x32xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_head"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}], function_type = (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<8x32xf32>, %arg1: tensor<32x8xf32>):
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
      "func.return"(%0) : (tensor<8x8xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_loss"}> ({
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<8x8xf32>, tensor<8xi32>) -> tensor<f32>, res_attrs = [{jax.result_info = "result[0]"}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg9: tensor<8x8xf32>, %arg10: tensor<8xi32>):
      %40 = "func.call"(%arg9) <{callee = @log_softmax}> : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %41 = "stablehlo.broadcast_in_dim"(%arg10) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi32>) -> tensor<8x1xi32>
      %42 = "func.call"(%40, %41) <{callee = @take_along_axis}> : (tensor<8x8xf32>, tensor<8x1xi32>) -> tensor<8x1xf32>
      %43 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %44 = "stablehlo.reduce"(%42, %43) <{dimensions = array<i64: 0, 1>}> ({
      ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
        %48 = "stablehlo.add"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%48) : (tensor<f32>) -> ()
      }) : (tensor<8x1xf32>, tensor<f32>) -> tensor<f32>
      %45 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %46 = "stablehlo.divide"(%44, %45) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %47 = "stablehlo.negate"(%46) : (tensor<f32>) -> tensor<f32>
      "func.return"(%47) : (tensor<f32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x8xf32>) -> tensor<8x8xf32>, res_attrs = [{}], sym_name = "log_softmax", sym_visibility = "private"}> ({
    ^bb0(%arg4: tensor<8x8xf32>):
      %23 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %24 = "stablehlo.reduce"(%arg4, %23) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
        %39 = "stablehlo.maximum"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%39) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %25 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
      %27 = "stablehlo.maximum"(%26, %24) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %30 = "stablehlo.subtract"(%arg4, %29) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %31 = "stablehlo.exponential"(%30) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %32 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %33 = "stablehlo.reduce"(%31, %32) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
        %38 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%38) : (tensor<f32>) -> ()
      }) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
      %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
      %35 = "stablehlo.log"(%34) : (tensor<8x1xf32>) -> tensor<8x1xf32>
      %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x8xf32>
      %37 = "stablehlo.subtract"(%30, %36) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      "func.return"(%37) : (tensor<8x8xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<8x8xf32>, tensor<8x1xi32>) -> tensor<8x1xf32>, res_attrs = [{}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<8x8xf32>, %arg1: tensor<8x1xi32>):
      %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x1xi32>
      %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
      %3 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x1xi32>
      %5 = "stablehlo.add"(%arg1, %4) : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi32>
      %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<8x1xi1>, tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi32>
      %7 = "stablehlo.reshape"(%6) : (tensor<8x1xi32>) -> tensor<8x1x1xi32>
      %8 = "stablehlo.constant"() <{value = dense<7> : tensor<1xi32>}> : () -> tensor<1xi32>
      %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x1x1xi32>
      %11 = "stablehlo.compare"(%7, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<8x1x1xi32>, tensor<8x1x1xi32>) -> tensor<8x1x1xi1>
      %12 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
      %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<8x1x1xi32>
      %14 = "stablehlo.compare"(%7, %13) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<8x1x1xi32>, tensor<8x1x1xi32>) -> tensor<8x1x1xi1>
      %15 = "stablehlo.and"(%11, %14) : (tensor<8x1x1xi1>, tensor<8x1x1xi1>) -> tensor<8x1x1xi1>
      %16 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 2>}> ({
      ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>):
        %22 = "stablehlo.and"(%arg2, %arg3) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%22) : (tensor<i1>) -> ()
      }) : (tensor<8x1x1xi1>, tensor<i1>) -> tensor<8x1xi1>
      %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<8x8xf32>, tensor<8x1x1xi32>) -> tensor<8x1xf32>
      %19 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1xf32>
      %21 = "stablehlo.select"(%17, %18, %20) : (tensor<8x1xi1>, tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
      "func.return"(%21) : (tensor<8x1xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  func.func @main(%arg0: !pw.array<8xi32>, %arg1: !pw.array<32x16xf32>, %arg2: !pw.array<16x32xf32>, %arg3: !pw.array<32x8xf32>, %arg4: !pw.array<8xi32>) -> (!pw.array<8x8xf32, @decoder>, !pw.array<f32>) {
    %0 = pw.call @jit_embed(%arg0, %arg1) : (!pw.array<8xi32>, !pw.array<32x16xf32>) -> !pw.array<8x16xf32>
    %1 = pw.call @jit_dense(%0, %arg2) on @encoder : (!pw.array<8x16xf32>, !pw.array<16x32xf32>) -> !pw.array<8x32xf32, @encoder>
    %2 = pw.call @jit_normalize(%1) : (!pw.array<8x32xf32, @encoder>) -> !pw.array<8x32xf32>
    %3 = pw.call @jit_head(%2, %arg3) on @decoder : (!pw.array<8x32xf32>, !pw.array<32x8xf32>) -> !pw.array<8x8xf32, @decoder>
    %4 = pw.call @jit_loss(%3, %arg4) : (!pw.array<8x8xf32, @decoder>, !pw.array<8xi32>) -> !pw.array<f32>
    return %3, %4 : !pw.array<8x8xf32, @decoder>, !pw.array<f32>
  }
}
