module @partially_placed {
  pw.mesh @encoder ["x"=2] {devices = array<i64: 0, 1>}
  pw.mesh @decoder ["x"=2] {devices = array<i64: 2, 3>}
  pw.mesh @auto1 [] {devices = array<i64: 0>}
  module @jit_embed attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0>], pw.num_partitions = 1 : i64} {
    func.func public @main(%arg0: tensor<8xi32>, %arg1: tensor<32x16xf32>) -> (tensor<8x16xf32> {jax.result_info = "result[0]"}) {
      %0 = call @_take(%arg1, %arg0) : (tensor<32x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
      return %0 : tensor<8x16xf32>
    }
    func.func private @_take(%arg0: tensor<32x16xf32>, %arg1: tensor<8xi32>) -> tensor<8x16xf32> {
      %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8xi32>
      %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
      %3 = "stablehlo.constant"() <{value = dense<32> : tensor<i32>}> : () -> tensor<i32>
      %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8xi32>
      %5 = "stablehlo.add"(%arg1, %4) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      %6 = call @_where(%2, %5, %arg1) : (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi32>) -> tensor<8x1xi32>
      %8 = "stablehlo.constant"() <{value = dense<31> : tensor<1xi32>}> : () -> tensor<1xi32>
      %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x1xi32>
      %11 = "stablehlo.compare"(%7, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
      %12 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1xi32>) -> tensor<1x1xi32>
      %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi32>) -> tensor<8x1xi32>
      %14 = "stablehlo.compare"(%7, %13) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
      %15 = "stablehlo.and"(%11, %14) : (tensor<8x1xi1>, tensor<8x1xi1>) -> tensor<8x1xi1>
      %16 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>):
        %23 = "stablehlo.and"(%arg2, %arg3) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%23) : (tensor<i1>) -> ()
      }) : (tensor<8x1xi1>, tensor<i1>) -> tensor<8xi1>
      %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<32x16xf32>, tensor<8x1xi32>) -> tensor<8x16xf32>
      %19 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi1>) -> tensor<8x16xi1>
      %20 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x16xf32>
      %22 = "stablehlo.select"(%19, %18, %21) : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
      return %22 : tensor<8x16xf32>
    }
    func.func private @_where(%arg0: tensor<8xi1>, %arg1: tensor<8xi32>, %arg2: tensor<8xi32>) -> tensor<8xi32> {
      %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<8xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
      return %0 : tensor<8xi32>
    }
  }
  module @jit_dense attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0, 1>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x32xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %1 = call @relu(%0) : (tensor<8x32xf32>) -> tensor<8x32xf32>
      return %1 : tensor<8x32xf32>
    }
    func.func private @relu(%arg0: tensor<8x32xf32>) -> tensor<8x32xf32> {
      %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x32xf32>
      %2 = "stablehlo.maximum"(%arg0, %1) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
      return %2 : tensor<8x32xf32>
    }
  }
  module @jit_normalize attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0, 1>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x32xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
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
      return %12 : tensor<8x32xf32>
    }
  }
  module @jit_head attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 2, 3>], pw.num_partitions = 2 : i64} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} : () -> ()
    func.func public @main(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
      %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
      return %0 : tensor<8x8xf32>
    }
  }
  module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32, pw.device_assignments = [array<i64: 0>], pw.num_partitions = 1 : i64} {
    func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8xi32>) -> (tensor<f32> {jax.result_info = "result[0]"}) {
      %0 = call @log_softmax(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi32>) -> tensor<8x1xi32>
      %2 = call @take_along_axis(%0, %1) : (tensor<8x8xf32>, tensor<8x1xi32>) -> tensor<8x1xf32>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.reduce"(%2, %3) <{dimensions = array<i64: 0, 1>}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %8 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%8) : (tensor<f32>) -> ()
      }) : (tensor<8x1xf32>, tensor<f32>) -> tensor<f32>
      %5 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %6 = "stablehlo.divide"(%4, %5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %7 = "stablehlo.negate"(%6) : (tensor<f32>) -> tensor<f32>
      return %7 : tensor<f32>
    }
    func.func private @log_softmax(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
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
      return %14 : tensor<8x8xf32>
    }
    func.func private @take_along_axis(%arg0: tensor<8x8xf32>, %arg1: tensor<8x1xi32>) -> tensor<8x1xf32> {
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
      return %21 : tensor<8x1xf32>
    }
  }
  func.func @main(%arg0: !pw.array<8xi32, @auto1, [{}]>, %arg1: !pw.array<32x16xf32, @auto1, [{}, {}]>, %arg2: !pw.array<16x32xf32, @encoder, [{}, {"x"}]>, %arg3: !pw.array<32x8xf32, @decoder, [{}, {"x"}]>, %arg4: !pw.array<8xi32, @auto1, [{}]>) -> (!pw.array<8x8xf32, @decoder, [{}, {}]>, !pw.array<f32, @auto1, []>) attributes {pw.schedule = "critical-path"} {
    %0 = pw.call @jit_embed(%arg0, %arg1) on @auto1 {in_shardings = [[[]], [[], []]]} : (!pw.array<8xi32, @auto1, [{}]>, !pw.array<32x16xf32, @auto1, [{}, {}]>) -> !pw.array<8x16xf32, @auto1, [{}, {}]>
    %1 = pw.scatter %0 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [8, 16] same_device>, #pw.piece<0 [0, 0] -> 1 [0, 0] size [8, 16] intra_island>] : !pw.array<8x16xf32, @auto1, [{}, {}]> -> !pw.array<8x16xf32, @encoder, [{}, {}]>
    %2 = pw.assemble %1 : !pw.array<8x16xf32, @encoder, [{}, {}]> -> !pw.array<8x16xf32, @encoder, [{}, {}]>
    %3 = pw.call @jit_dense(%2, %arg2) on @encoder {in_shardings = [[[], []], [[], ["x"]]]} : (!pw.array<8x16xf32, @encoder, [{}, {}]>, !pw.array<16x32xf32, @encoder, [{}, {"x"}]>) -> !pw.array<8x32xf32, @encoder, [{}, {"x"}]>
    %4 = pw.gather %3 [#pw.piece<0 [0, 0] -> 0 [0, 0] size [4, 16] same_device>, #pw.piece<1 [0, 0] -> 0 [0, 16] size [4, 16] intra_island>] : !pw.array<8x32xf32, @encoder, [{}, {"x"}]> -> !pw.array<8x32xf32, @encoder, [{"x"}, {}]>
    %5 = pw.gather %3 [#pw.piece<0 [4, 0] -> 1 [0, 0] size [4, 16] intra_island>, #pw.piece<1 [4, 0] -> 1 [0, 16] size [4, 16] same_device>] : !pw.array<8x32xf32, @encoder, [{}, {"x"}]> -> !pw.array<8x32xf32, @encoder, [{"x"}, {}]>
    %6 = pw.assemble %4, %5 : !pw.array<8x32xf32, @encoder, [{"x"}, {}]>, !pw.array<8x32xf32, @encoder, [{"x"}, {}]> -> !pw.array<8x32xf32, @encoder, [{"x"}, {}]>
    %7 = pw.call @jit_normalize(%6) on @encoder {in_shardings = [[["x"], []]]} : (!pw.array<8x32xf32, @encoder, [{"x"}, {}]>) -> !pw.array<8x32xf32, @encoder, [{"x"}, {}]>
    %8 = pw.gather %7 [#pw.piece<0 [0, 0] -> 2 [0, 0] size [4, 32] intra_island>, #pw.piece<1 [0, 0] -> 2 [4, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @encoder, [{"x"}, {}]> -> !pw.array<8x32xf32, @decoder, [{}, {}]>
    %9 = pw.gather %7 [#pw.piece<0 [0, 0] -> 3 [0, 0] size [4, 32] intra_island>, #pw.piece<1 [0, 0] -> 3 [4, 0] size [4, 32] intra_island>] : !pw.array<8x32xf32, @encoder, [{"x"}, {}]> -> !pw.array<8x32xf32, @decoder, [{}, {}]>
    %10 = pw.assemble %8, %9 : !pw.array<8x32xf32, @decoder, [{}, {}]>, !pw.array<8x32xf32, @decoder, [{}, {}]> -> !pw.array<8x32xf32, @decoder, [{}, {}]>
    %11 = pw.call @jit_head(%10, %arg3) on @decoder {in_shardings = [[[], []], [[], ["x"]]]} : (!pw.array<8x32xf32, @decoder, [{}, {}]>, !pw.array<32x8xf32, @decoder, [{}, {"x"}]>) -> !pw.array<8x8xf32, @decoder, [{}, {}]>
    %12 = pw.copy %11 [#pw.piece<2 [0, 0] -> 0 [0, 0] size [8, 8] intra_island>] : !pw.array<8x8xf32, @decoder, [{}, {}]> -> !pw.array<8x8xf32, @auto1, [{}, {}]>
    %13 = pw.assemble %12 : !pw.array<8x8xf32, @auto1, [{}, {}]> -> !pw.array<8x8xf32, @auto1, [{}, {}]>
    %14 = pw.call @jit_loss(%13, %arg4) on @auto1 {in_shardings = [[[], []], [[]]]} : (!pw.array<8x8xf32, @auto1, [{}, {}]>, !pw.array<8xi32, @auto1, [{}]>) -> !pw.array<f32, @auto1, []>
    return %11, %14 : !pw.array<8x8xf32, @decoder, [{}, {}]>, !pw.array<f32, @auto1, []>
  }
}
