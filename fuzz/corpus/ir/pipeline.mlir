module @pipeline {
  pw.mesh @stage0 ["x"=2]
  pw.mesh @stage1 ["x"=2]
  pw.mesh @stage2 ["x"=2]
  "builtin.module"() <{sym_name = "jit_mlp_layer"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}], function_type = (tensor<8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<8x16xf32>, %arg1: tensor<16x32xf32>, %arg2: tensor<32xf32>):
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<1x32xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<8x32xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      "func.return"(%4) : (tensor<8x32xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_mlp_layer_1"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<8x32xf32>, %arg1: tensor<32x32xf32>, %arg2: tensor<32xf32>):
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<1x32xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<8x32xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      "func.return"(%4) : (tensor<8x32xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_mlp_layer_2"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<8x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>, res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg0: tensor<8x32xf32>, %arg1: tensor<32x8xf32>, %arg2: tensor<8xf32>):
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<8x8xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      "func.return"(%4) : (tensor<8x8xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  func.func @main(%arg0: !pw.array<8x16xf32>, %arg1: !pw.array<8x16xf32>, %arg2: !pw.array<8x16xf32>, %arg3: !pw.array<8x16xf32>, %arg4: !pw.array<16x32xf32>, %arg5: !pw.array<32xf32>, %arg6: !pw.array<32x32xf32>, %arg7: !pw.array<32xf32>, %arg8: !pw.array<32x8xf32>, %arg9: !pw.array<8xf32>) -> (!pw.array<8x8xf32, @stage2>, !pw.array<8x8xf32, @stage2>, !pw.array<8x8xf32, @stage2>, !pw.array<8x8xf32, @stage2>) {
    %0 = pw.call @jit_mlp_layer(%arg0, %arg4, %arg5) on @stage0 : (!pw.array<8x16xf32>, !pw.array<16x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage0>
    %1 = pw.call @jit_mlp_layer_1(%0, %arg6, %arg7) on @stage1 : (!pw.array<8x32xf32, @stage0>, !pw.array<32x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage1>
    %2 = pw.call @jit_mlp_layer_2(%1, %arg8, %arg9) on @stage2 : (!pw.array<8x32xf32, @stage1>, !pw.array<32x8xf32>, !pw.array<8xf32>) -> !pw.array<8x8xf32, @stage2>
    %3 = pw.call @jit_mlp_layer(%arg1, %arg4, %arg5) on @stage0 : (!pw.array<8x16xf32>, !pw.array<16x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage0>
    %4 = pw.call @jit_mlp_layer_1(%3, %arg6, %arg7) on @stage1 : (!pw.array<8x32xf32, @stage0>, !pw.array<32x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage1>
    %5 = pw.call @jit_mlp_layer_2(%4, %arg8, %arg9) on @stage2 : (!pw.array<8x32xf32, @stage1>, !pw.array<32x8xf32>, !pw.array<8xf32>) -> !pw.array<8x8xf32, @stage2>
    %6 = pw.call @jit_mlp_layer(%arg2, %arg4, %arg5) on @stage0 : (!pw.array<8x16xf32>, !pw.array<16x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage0>
    %7 = pw.call @jit_mlp_layer_1(%6, %arg6, %arg7) on @stage1 : (!pw.array<8x32xf32, @stage0>, !pw.array<32x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage1>
    %8 = pw.call @jit_mlp_layer_2(%7, %arg8, %arg9) on @stage2 : (!pw.array<8x32xf32, @stage1>, !pw.array<32x8xf32>, !pw.array<8xf32>) -> !pw.array<8x8xf32, @stage2>
    %9 = pw.call @jit_mlp_layer(%arg3, %arg4, %arg5) on @stage0 : (!pw.array<8x16xf32>, !pw.array<16x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage0>
    %10 = pw.call @jit_mlp_layer_1(%9, %arg6, %arg7) on @stage1 : (!pw.array<8x32xf32, @stage0>, !pw.array<32x32xf32>, !pw.array<32xf32>) -> !pw.array<8x32xf32, @stage1>
    %11 = pw.call @jit_mlp_layer_2(%10, %arg8, %arg9) on @stage2 : (!pw.array<8x32xf32, @stage1>, !pw.array<32x8xf32>, !pw.array<8xf32>) -> !pw.array<8x8xf32, @stage2>
    return %2, %5, %8, %11 : !pw.array<8x8xf32, @stage2>, !pw.array<8x8xf32, @stage2>, !pw.array<8x8xf32, @stage2>, !pw.array<8x8xf32, @stage2>
  }
}
