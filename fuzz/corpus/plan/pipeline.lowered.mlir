module @pipeline {
  pw.mesh @stage0 ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @stage1 ["x"=2] {devices = array<i64: 2, 3>}
  pw.mesh @stage2 ["x"=2] {devices = array<i64: 0, 1>}
  module @jit_mlp_layer attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0, 1>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8x32xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<1x32xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<8x32xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      return %4 : tensor<8x32xf32>
    }
  }
  module @jit_mlp_layer_1 attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 2, 3>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8x32xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<32xf32>) -> tensor<1x32xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x32xf32>) -> tensor<8x32xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      return %4 : tensor<8x32xf32>
    }
  }
  module @jit_mlp_layer_2 attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0, 1>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8x8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
      %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<8x8xf32>
      %3 = "stablehlo.add"(%0, %2) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %4 = "stablehlo.tanh"(%3) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      return %4 : tensor<8x8xf32>
    }
  }
  func.func @main(%arg0: !pw.array<8x16xf32, @stage0, [{}, {}]>, %arg1: !pw.array<8x16xf32, @stage0, [{}, {}]>, %arg2: !pw.array<8x16xf32, @stage0, [{}, {}]>, %arg3: !pw.array<8x16xf32, @stage0, [{}, {}]>, %arg4: !pw.array<16x32xf32, @stage0, [{}, {"x"}]>, %arg5: !pw.array<32xf32, @stage0, [{"x"}]>, %arg6: !pw.array<32x32xf32, @stage1, [{"x"}, {}]>, %arg7: !pw.array<32xf32, @stage1, [{}]>, %arg8: !pw.array<32x8xf32, @stage2, [{}, {}]>, %arg9: !pw.array<8xf32, @stage2, [{}]>) -> (!pw.array<8x8xf32, @stage2, [{"x"}, {}]>, !pw.array<8x8xf32, @stage2, [{"x"}, {}]>, !pw.array<8x8xf32, @stage2, [{"x"}, {}]>, !pw.array<8x8xf32, @stage2, [{"x"}, {}]>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.call @jit_mlp_layer(%arg0, %arg4, %arg5) on @stage0 {in_shardings = [[[], []], [[], ["x"]], [["x"]]]} : (!pw.array<8x16xf32, @stage0, [{}, {}]>, !pw.array<16x32xf32, @stage0, [{}, {"x"}]>, !pw.array<32xf32, @stage0, [{"x"}]>) -> !pw.array<8x32xf32, @stage0, [{}, {"x"}]>
    %1 = pw.call @jit_mlp_layer(%arg1, %arg4, %arg5) on @stage0 {in_shardings = [[[], []], [[], ["x"]], [["x"]]]} : (!pw.array<8x16xf32, @stage0, [{}, {}]>, !pw.array<16x32xf32, @stage0, [{}, {"x"}]>, !pw.array<32xf32, @stage0, [{"x"}]>) -> !pw.array<8x32xf32, @stage0, [{}, {"x"}]>
    %2 = pw.call @jit_mlp_layer(%arg2, %arg4, %arg5) on @stage0 {in_shardings = [[[], []], [[], ["x"]], [["x"]]]} : (!pw.array<8x16xf32, @stage0, [{}, {}]>, !pw.array<16x32xf32, @stage0, [{}, {"x"}]>, !pw.array<32xf32, @stage0, [{"x"}]>) -> !pw.array<8x32xf32, @stage0, [{}, {"x"}]>
    %3 = pw.call @jit_mlp_layer(%arg3, %arg4, %arg5) on @stage0 {in_shardings = [[[], []], [[], ["x"]], [["x"]]]} : (!pw.array<8x16xf32, @stage0, [{}, {}]>, !pw.array<16x32xf32, @stage0, [{}, {"x"}]>, !pw.array<32xf32, @stage0, [{"x"}]>) -> !pw.array<8x32xf32, @stage0, [{}, {"x"}]>
    %4 = pw.copy %0 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %5 = pw.copy %0 [#pw.piece<1 [0, 0] -> 3 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %6 = pw.copy %1 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %7 = pw.copy %1 [#pw.piece<1 [0, 0] -> 3 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %8 = pw.copy %2 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %9 = pw.copy %2 [#pw.piece<1 [0, 0] -> 3 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %10 = pw.copy %3 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %11 = pw.copy %3 [#pw.piece<1 [0, 0] -> 3 [0, 0] size [8, 16] intra_island>] : !pw.array<8x32xf32, @stage0, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %12 = pw.assemble %4, %5 : !pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<8x32xf32, @stage1, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %13 = pw.call @jit_mlp_layer_1(%12, %arg6, %arg7) on @stage1 {in_shardings = [[[], ["x"]], [["x"], []], [[]]]} : (!pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<32x32xf32, @stage1, [{"x"}, {}]>, !pw.array<32xf32, @stage1, [{}]>) -> !pw.array<8x32xf32, @stage1, [{}, {}]>
    %14 = pw.assemble %6, %7 : !pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<8x32xf32, @stage1, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %15 = pw.call @jit_mlp_layer_1(%14, %arg6, %arg7) on @stage1 {in_shardings = [[[], ["x"]], [["x"], []], [[]]]} : (!pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<32x32xf32, @stage1, [{"x"}, {}]>, !pw.array<32xf32, @stage1, [{}]>) -> !pw.array<8x32xf32, @stage1, [{}, {}]>
    %16 = pw.assemble %8, %9 : !pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<8x32xf32, @stage1, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %17 = pw.call @jit_mlp_layer_1(%16, %arg6, %arg7) on @stage1 {in_shardings = [[[], ["x"]], [["x"], []], [[]]]} : (!pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<32x32xf32, @stage1, [{"x"}, {}]>, !pw.array<32xf32, @stage1, [{}]>) -> !pw.array<8x32xf32, @stage1, [{}, {}]>
    %18 = pw.assemble %10, %11 : !pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<8x32xf32, @stage1, [{}, {"x"}]> -> !pw.array<8x32xf32, @stage1, [{}, {"x"}]>
    %19 = pw.call @jit_mlp_layer_1(%18, %arg6, %arg7) on @stage1 {in_shardings = [[[], ["x"]], [["x"], []], [[]]]} : (!pw.array<8x32xf32, @stage1, [{}, {"x"}]>, !pw.array<32x32xf32, @stage1, [{"x"}, {}]>, !pw.array<32xf32, @stage1, [{}]>) -> !pw.array<8x32xf32, @stage1, [{}, {}]>
    %20 = pw.copy %13 [#pw.piece<2 [0, 0] -> 0 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %21 = pw.copy %13 [#pw.piece<3 [4, 0] -> 1 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %22 = pw.copy %15 [#pw.piece<2 [0, 0] -> 0 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %23 = pw.copy %15 [#pw.piece<3 [4, 0] -> 1 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %24 = pw.copy %17 [#pw.piece<2 [0, 0] -> 0 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %25 = pw.copy %17 [#pw.piece<3 [4, 0] -> 1 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %26 = pw.copy %19 [#pw.piece<2 [0, 0] -> 0 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %27 = pw.copy %19 [#pw.piece<3 [4, 0] -> 1 [0, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @stage1, [{}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %28 = pw.assemble %20, %21 : !pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<8x32xf32, @stage2, [{"x"}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %29 = pw.call @jit_mlp_layer_2(%28, %arg8, %arg9) on @stage2 {in_shardings = [[["x"], []], [[], []], [[]]]} : (!pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<32x8xf32, @stage2, [{}, {}]>, !pw.array<8xf32, @stage2, [{}]>) -> !pw.array<8x8xf32, @stage2, [{"x"}, {}]>
    %30 = pw.assemble %22, %23 : !pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<8x32xf32, @stage2, [{"x"}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %31 = pw.call @jit_mlp_layer_2(%30, %arg8, %arg9) on @stage2 {in_shardings = [[["x"], []], [[], []], [[]]]} : (!pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<32x8xf32, @stage2, [{}, {}]>, !pw.array<8xf32, @stage2, [{}]>) -> !pw.array<8x8xf32, @stage2, [{"x"}, {}]>
    %32 = pw.assemble %24, %25 : !pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<8x32xf32, @stage2, [{"x"}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %33 = pw.call @jit_mlp_layer_2(%32, %arg8, %arg9) on @stage2 {in_shardings = [[["x"], []], [[], []], [[]]]} : (!pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<32x8xf32, @stage2, [{}, {}]>, !pw.array<8xf32, @stage2, [{}]>) -> !pw.array<8x8xf32, @stage2, [{"x"}, {}]>
    %34 = pw.assemble %26, %27 : !pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<8x32xf32, @stage2, [{"x"}, {}]> -> !pw.array<8x32xf32, @stage2, [{"x"}, {}]>
    %35 = pw.call @jit_mlp_layer_2(%34, %arg8, %arg9) on @stage2 {in_shardings = [[["x"], []], [[], []], [[]]]} : (!pw.array<8x32xf32, @stage2, [{"x"}, {}]>, !pw.array<32x8xf32, @stage2, [{}, {}]>, !pw.array<8xf32, @stage2, [{}]>) -> !pw.array<8x8xf32, @stage2, [{"x"}, {}]>
    return %29, %31, %33, %35 : !pw.array<8x8xf32, @stage2, [{"x"}, {}]>, !pw.array<8x8xf32, @stage2, [{"x"}, {}]>, !pw.array<8x8xf32, @stage2, [{"x"}, {}]>, !pw.array<8x8xf32, @stage2, [{"x"}, {}]>
  }
}
