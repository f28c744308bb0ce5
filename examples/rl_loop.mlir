module @rl_loop {
  pw.mesh @sampler ["x"=1]
  pw.mesh @trainer ["x"=1]
  "builtin.module"() <{sym_name = "jit_rl_sample"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, []>}], function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<320x256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<ui32>) -> (tensor<128x256xf32>, tensor<128xi32>, tensor<128xf32>, tensor<128xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {jax.result_info = "result[3]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg126: tensor<256x256xf32>, %arg127: tensor<256x64xf32>, %arg128: tensor<320x256xf32>, %arg129: tensor<256x256xf32>, %arg130: tensor<256xf32>, %arg131: tensor<ui32>):
      %416 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %417 = "stablehlo.shift_right_logical"(%arg131, %416) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %418 = "stablehlo.broadcast_in_dim"(%417) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<1xui32>
      %419 = "stablehlo.constant"() <{value = dense<4294967295> : tensor<ui32>}> : () -> tensor<ui32>
      %420 = "stablehlo.and"(%arg131, %419) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %421 = "stablehlo.broadcast_in_dim"(%420) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<1xui32>
      %422 = "stablehlo.concatenate"(%418, %421) <{dimension = 0 : i64}> : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
      %423 = "func.call"(%422) <{callee = @_threefry_split}> : (tensor<2xui32>) -> tensor<2x2xui32>
      %424 = "stablehlo.slice"(%423) <{limit_indices = array<i64: 1, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xui32>) -> tensor<1x2xui32>
      %425 = "stablehlo.reshape"(%424) : (tensor<1x2xui32>) -> tensor<2xui32>
      %426 = "stablehlo.slice"(%423) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<2x2xui32>) -> tensor<1x2xui32>
      %427 = "stablehlo.reshape"(%426) : (tensor<1x2xui32>) -> tensor<2xui32>
      %428 = "func.call"(%425) <{callee = @_normal}> : (tensor<2xui32>) -> tensor<128x256xf32>
      %429 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %430 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %431:5 = "stablehlo.while"(%arg126, %arg127, %430, %429, %428) ({
      ^bb0(%arg145: tensor<256x256xf32>, %arg146: tensor<256x64xf32>, %arg147: tensor<i32>, %arg148: tensor<i32>, %arg149: tensor<128x256xf32>):
        %459 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %460 = "stablehlo.compare"(%arg147, %459) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%460) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg140: tensor<256x256xf32>, %arg141: tensor<256x64xf32>, %arg142: tensor<i32>, %arg143: tensor<i32>, %arg144: tensor<128x256xf32>):
        %456:2 = "func.call"(%arg140, %arg141, %arg143, %arg144) <{callee = @closed_call_2}> : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>)
        %457 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %458 = "stablehlo.add"(%arg142, %457) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg140, %arg141, %458, %456#0, %456#1) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>) -> ()
      }) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>)
      %432 = "stablehlo.dot_general"(%431#4, %arg126) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %433 = "stablehlo.tanh"(%432) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %434 = "stablehlo.dot_general"(%433, %arg127) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %435 = "func.call"(%427) <{callee = @_gumbel}> : (tensor<2xui32>) -> tensor<128x64xf32>
      %436 = "stablehlo.add"(%435, %434) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %437 = "func.call"(%436) <{callee = @argmax}> : (tensor<128x64xf32>) -> tensor<128xi32>
      %438 = "func.call"(%434) <{callee = @log_softmax}> : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %439 = "stablehlo.broadcast_in_dim"(%437) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xi32>) -> tensor<128x1xi32>
      %440 = "func.call"(%438, %439) <{callee = @take_along_axis}> : (tensor<128x64xf32>, tensor<128x1xi32>) -> tensor<128x1xf32>
      %441 = "stablehlo.reshape"(%440) : (tensor<128x1xf32>) -> tensor<128xf32>
      %442 = "func.call"(%437) <{callee = @_one_hot}> : (tensor<128xi32>) -> tensor<128x64xf32>
      %443 = "stablehlo.concatenate"(%428, %442) <{dimension = 1 : i64}> : (tensor<128x256xf32>, tensor<128x64xf32>) -> tensor<128x320xf32>
      %444 = "stablehlo.dot_general"(%443, %arg128) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x320xf32>, tensor<320x256xf32>) -> tensor<128x256xf32>
      %445 = "stablehlo.tanh"(%444) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %446 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %447 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %448:4 = "stablehlo.while"(%arg129, %447, %446, %445) ({
      ^bb0(%arg136: tensor<256x256xf32>, %arg137: tensor<i32>, %arg138: tensor<i32>, %arg139: tensor<128x256xf32>):
        %454 = "stablehlo.constant"() <{value = dense<16> : tensor<i32>}> : () -> tensor<i32>
        %455 = "stablehlo.compare"(%arg137, %454) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%455) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg132: tensor<256x256xf32>, %arg133: tensor<i32>, %arg134: tensor<i32>, %arg135: tensor<128x256xf32>):
        %451:2 = "func.call"(%arg132, %arg134, %arg135) <{callee = @closed_call_6}> : (tensor<256x256xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>)
        %452 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %453 = "stablehlo.add"(%arg133, %452) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg132, %453, %451#0, %451#1) : (tensor<256x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>) -> ()
      }) : (tensor<256x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>)
      %449 = "stablehlo.dot_general"(%448#3, %arg130) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128xf32>
      %450 = "stablehlo.tanh"(%449) : (tensor<128xf32>) -> tensor<128xf32>
      "func.return"(%428, %437, %441, %450) : (tensor<128x256xf32>, tensor<128xi32>, tensor<128xf32>, tensor<128xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<2x2xui32>, res_attrs = [{}], sym_name = "_threefry_split", sym_visibility = "private"}> ({
    ^bb0(%arg125: tensor<2xui32>):
      %399 = "stablehlo.slice"(%arg125) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %400 = "stablehlo.reshape"(%399) : (tensor<1xui32>) -> tensor<ui32>
      %401 = "stablehlo.slice"(%arg125) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %402 = "stablehlo.reshape"(%401) : (tensor<1xui32>) -> tensor<ui32>
      %403 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<2xui64>
      %404 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
      %405 = "stablehlo.broadcast_in_dim"(%404) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
      %406 = "stablehlo.multiply"(%405, %403) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
      %407 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
      %408 = "stablehlo.broadcast_in_dim"(%407) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<2xui64>
      %409 = "stablehlo.shift_right_logical"(%406, %408) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
      %410 = "stablehlo.convert"(%406) : (tensor<2xui64>) -> tensor<2xui32>
      %411 = "stablehlo.convert"(%409) : (tensor<2xui64>) -> tensor<2xui32>
      %412:2 = "func.call"(%400, %402, %411, %410) <{callee = @threefry2x32}> : (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>)
      %413 = "stablehlo.broadcast_in_dim"(%412#0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x1xui32>
      %414 = "stablehlo.broadcast_in_dim"(%412#1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x1xui32>
      %415 = "stablehlo.concatenate"(%413, %414) <{dimension = 1 : i64}> : (tensor<2x1xui32>, tensor<2x1xui32>) -> tensor<2x2xui32>
      "func.return"(%415) : (tensor<2x2xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<2xui32>, tensor<2xui32>) -> (tensor<2xui32>, tensor<2xui32>), sym_name = "threefry2x32", sym_visibility = "private"}> ({
    ^bb0(%arg103: tensor<ui32>, %arg104: tensor<ui32>, %arg105: tensor<2xui32>, %arg106: tensor<2xui32>):
      %382 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %383 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %384 = "stablehlo.xor"(%arg103, %arg104) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %385 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
      %386 = "stablehlo.xor"(%384, %385) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %387 = "stablehlo.broadcast_in_dim"(%arg103) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %388 = "stablehlo.add"(%arg105, %387) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %389 = "stablehlo.broadcast_in_dim"(%arg104) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %390 = "stablehlo.add"(%arg106, %389) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %391 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %392 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %393:9 = "stablehlo.while"(%392, %391, %388, %390, %arg104, %386, %arg103, %382, %383) ({
      ^bb0(%arg116: tensor<i32>, %arg117: tensor<i32>, %arg118: tensor<2xui32>, %arg119: tensor<2xui32>, %arg120: tensor<ui32>, %arg121: tensor<ui32>, %arg122: tensor<ui32>, %arg123: tensor<4xui32>, %arg124: tensor<4xui32>):
        %397 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
        %398 = "stablehlo.compare"(%arg116, %397) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%398) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg107: tensor<i32>, %arg108: tensor<i32>, %arg109: tensor<2xui32>, %arg110: tensor<2xui32>, %arg111: tensor<ui32>, %arg112: tensor<ui32>, %arg113: tensor<ui32>, %arg114: tensor<4xui32>, %arg115: tensor<4xui32>):
        %394:8 = "func.call"(%arg108, %arg109, %arg110, %arg111, %arg112, %arg113, %arg114, %arg115) <{callee = @closed_call}> : (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
        %395 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %396 = "stablehlo.add"(%arg107, %395) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%396, %394#0, %394#1, %394#2, %394#3, %394#4, %394#5, %394#6, %394#7) : (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
      }) : (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "func.return"(%393#2, %393#3) : (tensor<2xui32>, tensor<2xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
    ^bb0(%arg95: tensor<i32>, %arg96: tensor<2xui32>, %arg97: tensor<2xui32>, %arg98: tensor<ui32>, %arg99: tensor<ui32>, %arg100: tensor<ui32>, %arg101: tensor<4xui32>, %arg102: tensor<4xui32>):
      %327 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %328 = "stablehlo.add"(%arg95, %327) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %329 = "stablehlo.slice"(%arg101) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %330 = "stablehlo.reshape"(%329) : (tensor<1xui32>) -> tensor<ui32>
      %331 = "stablehlo.add"(%arg96, %arg97) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %332 = "stablehlo.broadcast_in_dim"(%330) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %333 = "stablehlo.shift_left"(%arg97, %332) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %334 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %335 = "stablehlo.subtract"(%334, %330) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %336 = "stablehlo.broadcast_in_dim"(%335) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %337 = "stablehlo.shift_right_logical"(%arg97, %336) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %338 = "stablehlo.or"(%333, %337) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %339 = "stablehlo.xor"(%331, %338) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %340 = "stablehlo.slice"(%arg101) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %341 = "stablehlo.reshape"(%340) : (tensor<1xui32>) -> tensor<ui32>
      %342 = "stablehlo.add"(%331, %339) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %343 = "stablehlo.broadcast_in_dim"(%341) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %344 = "stablehlo.shift_left"(%339, %343) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %345 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %346 = "stablehlo.subtract"(%345, %341) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %347 = "stablehlo.broadcast_in_dim"(%346) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %348 = "stablehlo.shift_right_logical"(%339, %347) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %349 = "stablehlo.or"(%344, %348) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %350 = "stablehlo.xor"(%342, %349) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %351 = "stablehlo.slice"(%arg101) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %352 = "stablehlo.reshape"(%351) : (tensor<1xui32>) -> tensor<ui32>
      %353 = "stablehlo.add"(%342, %350) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %354 = "stablehlo.broadcast_in_dim"(%352) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %355 = "stablehlo.shift_left"(%350, %354) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %356 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %357 = "stablehlo.subtract"(%356, %352) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %358 = "stablehlo.broadcast_in_dim"(%357) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %359 = "stablehlo.shift_right_logical"(%350, %358) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %360 = "stablehlo.or"(%355, %359) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %361 = "stablehlo.xor"(%353, %360) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %362 = "stablehlo.slice"(%arg101) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %363 = "stablehlo.reshape"(%362) : (tensor<1xui32>) -> tensor<ui32>
      %364 = "stablehlo.add"(%353, %361) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %365 = "stablehlo.broadcast_in_dim"(%363) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %366 = "stablehlo.shift_left"(%361, %365) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %367 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %368 = "stablehlo.subtract"(%367, %363) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %369 = "stablehlo.broadcast_in_dim"(%368) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %370 = "stablehlo.shift_right_logical"(%361, %369) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %371 = "stablehlo.or"(%366, %370) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %372 = "stablehlo.xor"(%364, %371) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %373 = "stablehlo.broadcast_in_dim"(%arg98) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %374 = "stablehlo.add"(%364, %373) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %375 = "stablehlo.broadcast_in_dim"(%arg99) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %376 = "stablehlo.add"(%372, %375) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      %377 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %378 = "stablehlo.add"(%arg95, %377) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %379 = "stablehlo.convert"(%378) : (tensor<i32>) -> tensor<ui32>
      %380 = "stablehlo.broadcast_in_dim"(%379) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<2xui32>
      %381 = "stablehlo.add"(%376, %380) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
      "func.return"(%328, %374, %381, %arg99, %arg100, %arg98, %arg102, %arg101) : (tensor<i32>, tensor<2xui32>, tensor<2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<128x256xf32>, res_attrs = [{}], sym_name = "_normal", sym_visibility = "private"}> ({
    ^bb0(%arg94: tensor<2xui32>):
      %326 = "func.call"(%arg94) <{callee = @_normal_real}> : (tensor<2xui32>) -> tensor<128x256xf32>
      "func.return"(%326) : (tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<128x256xf32>, res_attrs = [{}], sym_name = "_normal_real", sym_visibility = "private"}> ({
    ^bb0(%arg93: tensor<2xui32>):
      %319 = "stablehlo.constant"() <{value = dense<-0.99999994> : tensor<f32>}> : () -> tensor<f32>
      %320 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %321 = "func.call"(%arg93, %319, %320) <{callee = @_uniform}> : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<128x256xf32>
      %322 = "chlo.erf_inv"(%321) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %323 = "stablehlo.constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
      %324 = "stablehlo.broadcast_in_dim"(%323) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %325 = "stablehlo.multiply"(%324, %322) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%325) : (tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<128x256xf32>, res_attrs = [{}], sym_name = "_uniform", sym_visibility = "private"}> ({
    ^bb0(%arg90: tensor<2xui32>, %arg91: tensor<f32>, %arg92: tensor<f32>):
      %280 = "stablehlo.broadcast_in_dim"(%arg91) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
      %281 = "stablehlo.broadcast_in_dim"(%arg92) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
      %282 = "stablehlo.slice"(%arg90) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %283 = "stablehlo.reshape"(%282) : (tensor<1xui32>) -> tensor<ui32>
      %284 = "stablehlo.slice"(%arg90) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %285 = "stablehlo.reshape"(%284) : (tensor<1xui32>) -> tensor<ui32>
      %286 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<128x256xui64>
      %287 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<128x256xui64>
      %288 = "stablehlo.constant"() <{value = dense<256> : tensor<ui64>}> : () -> tensor<ui64>
      %289 = "stablehlo.broadcast_in_dim"(%288) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x256xui64>
      %290 = "stablehlo.multiply"(%289, %286) : (tensor<128x256xui64>, tensor<128x256xui64>) -> tensor<128x256xui64>
      %291 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
      %292 = "stablehlo.broadcast_in_dim"(%291) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x256xui64>
      %293 = "stablehlo.multiply"(%292, %287) : (tensor<128x256xui64>, tensor<128x256xui64>) -> tensor<128x256xui64>
      %294 = "stablehlo.add"(%290, %293) : (tensor<128x256xui64>, tensor<128x256xui64>) -> tensor<128x256xui64>
      %295 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
      %296 = "stablehlo.broadcast_in_dim"(%295) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x256xui64>
      %297 = "stablehlo.shift_right_logical"(%294, %296) : (tensor<128x256xui64>, tensor<128x256xui64>) -> tensor<128x256xui64>
      %298 = "stablehlo.convert"(%294) : (tensor<128x256xui64>) -> tensor<128x256xui32>
      %299 = "stablehlo.convert"(%297) : (tensor<128x256xui64>) -> tensor<128x256xui32>
      %300:2 = "func.call"(%283, %285, %299, %298) <{callee = @threefry2x32_0}> : (tensor<ui32>, tensor<ui32>, tensor<128x256xui32>, tensor<128x256xui32>) -> (tensor<128x256xui32>, tensor<128x256xui32>)
      %301 = "stablehlo.xor"(%300#0, %300#1) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %302 = "stablehlo.constant"() <{value = dense<9> : tensor<ui32>}> : () -> tensor<ui32>
      %303 = "stablehlo.broadcast_in_dim"(%302) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %304 = "stablehlo.shift_right_logical"(%301, %303) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %305 = "stablehlo.constant"() <{value = dense<1065353216> : tensor<ui32>}> : () -> tensor<ui32>
      %306 = "stablehlo.broadcast_in_dim"(%305) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %307 = "stablehlo.or"(%304, %306) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %308 = "stablehlo.bitcast_convert"(%307) : (tensor<128x256xui32>) -> tensor<128x256xf32>
      %309 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %310 = "stablehlo.broadcast_in_dim"(%309) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %311 = "stablehlo.subtract"(%308, %310) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %312 = "stablehlo.subtract"(%281, %280) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
      %313 = "stablehlo.broadcast_in_dim"(%312) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x256xf32>
      %314 = "stablehlo.multiply"(%311, %313) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %315 = "stablehlo.broadcast_in_dim"(%280) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x256xf32>
      %316 = "stablehlo.add"(%314, %315) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %317 = "stablehlo.broadcast_in_dim"(%280) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x256xf32>
      %318 = "stablehlo.maximum"(%317, %316) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%318) : (tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<128x256xui32>, tensor<128x256xui32>) -> (tensor<128x256xui32>, tensor<128x256xui32>), sym_name = "threefry2x32_0", sym_visibility = "private"}> ({
    ^bb0(%arg68: tensor<ui32>, %arg69: tensor<ui32>, %arg70: tensor<128x256xui32>, %arg71: tensor<128x256xui32>):
      %263 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %264 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %265 = "stablehlo.xor"(%arg68, %arg69) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %266 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
      %267 = "stablehlo.xor"(%265, %266) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %268 = "stablehlo.broadcast_in_dim"(%arg68) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %269 = "stablehlo.add"(%arg70, %268) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %270 = "stablehlo.broadcast_in_dim"(%arg69) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %271 = "stablehlo.add"(%arg71, %270) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %272 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %273 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %274:9 = "stablehlo.while"(%273, %272, %269, %271, %arg69, %267, %arg68, %263, %264) ({
      ^bb0(%arg81: tensor<i32>, %arg82: tensor<i32>, %arg83: tensor<128x256xui32>, %arg84: tensor<128x256xui32>, %arg85: tensor<ui32>, %arg86: tensor<ui32>, %arg87: tensor<ui32>, %arg88: tensor<4xui32>, %arg89: tensor<4xui32>):
        %278 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
        %279 = "stablehlo.compare"(%arg81, %278) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%279) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg72: tensor<i32>, %arg73: tensor<i32>, %arg74: tensor<128x256xui32>, %arg75: tensor<128x256xui32>, %arg76: tensor<ui32>, %arg77: tensor<ui32>, %arg78: tensor<ui32>, %arg79: tensor<4xui32>, %arg80: tensor<4xui32>):
        %275:8 = "func.call"(%arg73, %arg74, %arg75, %arg76, %arg77, %arg78, %arg79, %arg80) <{callee = @closed_call_1}> : (tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
        %276 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %277 = "stablehlo.add"(%arg72, %276) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%277, %275#0, %275#1, %275#2, %275#3, %275#4, %275#5, %275#6, %275#7) : (tensor<i32>, tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
      }) : (tensor<i32>, tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "func.return"(%274#2, %274#3) : (tensor<128x256xui32>, tensor<128x256xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call_1", sym_visibility = "private"}> ({
    ^bb0(%arg60: tensor<i32>, %arg61: tensor<128x256xui32>, %arg62: tensor<128x256xui32>, %arg63: tensor<ui32>, %arg64: tensor<ui32>, %arg65: tensor<ui32>, %arg66: tensor<4xui32>, %arg67: tensor<4xui32>):
      %208 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %209 = "stablehlo.add"(%arg60, %208) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %210 = "stablehlo.slice"(%arg66) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %211 = "stablehlo.reshape"(%210) : (tensor<1xui32>) -> tensor<ui32>
      %212 = "stablehlo.add"(%arg61, %arg62) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %213 = "stablehlo.broadcast_in_dim"(%211) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %214 = "stablehlo.shift_left"(%arg62, %213) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %215 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %216 = "stablehlo.subtract"(%215, %211) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %217 = "stablehlo.broadcast_in_dim"(%216) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %218 = "stablehlo.shift_right_logical"(%arg62, %217) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %219 = "stablehlo.or"(%214, %218) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %220 = "stablehlo.xor"(%212, %219) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %221 = "stablehlo.slice"(%arg66) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %222 = "stablehlo.reshape"(%221) : (tensor<1xui32>) -> tensor<ui32>
      %223 = "stablehlo.add"(%212, %220) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %224 = "stablehlo.broadcast_in_dim"(%222) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %225 = "stablehlo.shift_left"(%220, %224) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %226 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %227 = "stablehlo.subtract"(%226, %222) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %228 = "stablehlo.broadcast_in_dim"(%227) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %229 = "stablehlo.shift_right_logical"(%220, %228) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %230 = "stablehlo.or"(%225, %229) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %231 = "stablehlo.xor"(%223, %230) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %232 = "stablehlo.slice"(%arg66) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %233 = "stablehlo.reshape"(%232) : (tensor<1xui32>) -> tensor<ui32>
      %234 = "stablehlo.add"(%223, %231) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %235 = "stablehlo.broadcast_in_dim"(%233) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %236 = "stablehlo.shift_left"(%231, %235) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %237 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %238 = "stablehlo.subtract"(%237, %233) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %239 = "stablehlo.broadcast_in_dim"(%238) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %240 = "stablehlo.shift_right_logical"(%231, %239) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %241 = "stablehlo.or"(%236, %240) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %242 = "stablehlo.xor"(%234, %241) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %243 = "stablehlo.slice"(%arg66) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %244 = "stablehlo.reshape"(%243) : (tensor<1xui32>) -> tensor<ui32>
      %245 = "stablehlo.add"(%234, %242) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %246 = "stablehlo.broadcast_in_dim"(%244) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %247 = "stablehlo.shift_left"(%242, %246) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %248 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %249 = "stablehlo.subtract"(%248, %244) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %250 = "stablehlo.broadcast_in_dim"(%249) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %251 = "stablehlo.shift_right_logical"(%242, %250) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %252 = "stablehlo.or"(%247, %251) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %253 = "stablehlo.xor"(%245, %252) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %254 = "stablehlo.broadcast_in_dim"(%arg63) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %255 = "stablehlo.add"(%245, %254) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %256 = "stablehlo.broadcast_in_dim"(%arg64) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %257 = "stablehlo.add"(%253, %256) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      %258 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %259 = "stablehlo.add"(%arg60, %258) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %260 = "stablehlo.convert"(%259) : (tensor<i32>) -> tensor<ui32>
      %261 = "stablehlo.broadcast_in_dim"(%260) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x256xui32>
      %262 = "stablehlo.add"(%257, %261) : (tensor<128x256xui32>, tensor<128x256xui32>) -> tensor<128x256xui32>
      "func.return"(%209, %255, %262, %arg64, %arg65, %arg63, %arg67, %arg66) : (tensor<i32>, tensor<128x256xui32>, tensor<128x256xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>), res_attrs = [{}, {}], sym_name = "closed_call_2", sym_visibility = "private"}> ({
    ^bb0(%arg52: tensor<256x256xf32>, %arg53: tensor<256x64xf32>, %arg54: tensor<i32>, %arg55: tensor<128x256xf32>):
      %183 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %184 = "stablehlo.add"(%arg54, %183) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %185 = "stablehlo.dot_general"(%arg55, %arg52) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %186 = "stablehlo.tanh"(%185) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %187 = "stablehlo.dot_general"(%186, %arg53) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %188 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %189 = "stablehlo.reduce"(%187, %188) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg58: tensor<f32>, %arg59: tensor<f32>):
        %207 = "stablehlo.maximum"(%arg58, %arg59) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%207) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %190 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %191 = "stablehlo.broadcast_in_dim"(%190) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %192 = "stablehlo.maximum"(%191, %189) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %193 = "stablehlo.broadcast_in_dim"(%192) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %194 = "stablehlo.broadcast_in_dim"(%193) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %195 = "stablehlo.subtract"(%187, %194) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %196 = "stablehlo.exponential"(%195) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %197 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %198 = "stablehlo.reduce"(%196, %197) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg56: tensor<f32>, %arg57: tensor<f32>):
        %206 = "stablehlo.add"(%arg56, %arg57) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%206) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %199 = "stablehlo.broadcast_in_dim"(%198) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %200 = "stablehlo.broadcast_in_dim"(%199) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %201 = "stablehlo.divide"(%196, %200) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %202 = "stablehlo.transpose"(%arg53) <{permutation = array<i64: 1, 0>}> : (tensor<256x64xf32>) -> tensor<64x256xf32>
      %203 = "stablehlo.dot_general"(%201, %202) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
      %204 = "stablehlo.add"(%arg55, %203) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %205 = "stablehlo.tanh"(%204) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%184, %205) : (tensor<i32>, tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "_gumbel", sym_visibility = "private"}> ({
    ^bb0(%arg51: tensor<2xui32>):
      %176 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %177 = "stablehlo.constant"() <{value = dense<1.17549435E-38> : tensor<f32>}> : () -> tensor<f32>
      %178 = "func.call"(%arg51, %176, %177) <{callee = @_uniform_3}> : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
      %179 = "stablehlo.log"(%178) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %180 = "stablehlo.negate"(%179) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %181 = "stablehlo.log"(%180) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %182 = "stablehlo.negate"(%181) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%182) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "_uniform_3", sym_visibility = "private"}> ({
    ^bb0(%arg48: tensor<2xui32>, %arg49: tensor<f32>, %arg50: tensor<f32>):
      %136 = "stablehlo.convert"(%arg49) : (tensor<f32>) -> tensor<f32>
      %137 = "stablehlo.broadcast_in_dim"(%arg50) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
      %138 = "stablehlo.broadcast_in_dim"(%136) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
      %139 = "stablehlo.slice"(%arg48) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %140 = "stablehlo.reshape"(%139) : (tensor<1xui32>) -> tensor<ui32>
      %141 = "stablehlo.slice"(%arg48) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %142 = "stablehlo.reshape"(%141) : (tensor<1xui32>) -> tensor<ui32>
      %143 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<128x64xui64>
      %144 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<128x64xui64>
      %145 = "stablehlo.constant"() <{value = dense<64> : tensor<ui64>}> : () -> tensor<ui64>
      %146 = "stablehlo.broadcast_in_dim"(%145) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x64xui64>
      %147 = "stablehlo.multiply"(%146, %143) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %148 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
      %149 = "stablehlo.broadcast_in_dim"(%148) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x64xui64>
      %150 = "stablehlo.multiply"(%149, %144) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %151 = "stablehlo.add"(%147, %150) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %152 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
      %153 = "stablehlo.broadcast_in_dim"(%152) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x64xui64>
      %154 = "stablehlo.shift_right_logical"(%151, %153) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %155 = "stablehlo.convert"(%151) : (tensor<128x64xui64>) -> tensor<128x64xui32>
      %156 = "stablehlo.convert"(%154) : (tensor<128x64xui64>) -> tensor<128x64xui32>
      %157:2 = "func.call"(%140, %142, %156, %155) <{callee = @threefry2x32_4}> : (tensor<ui32>, tensor<ui32>, tensor<128x64xui32>, tensor<128x64xui32>) -> (tensor<128x64xui32>, tensor<128x64xui32>)
      %158 = "stablehlo.xor"(%157#0, %157#1) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %159 = "stablehlo.constant"() <{value = dense<9> : tensor<ui32>}> : () -> tensor<ui32>
      %160 = "stablehlo.broadcast_in_dim"(%159) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %161 = "stablehlo.shift_right_logical"(%158, %160) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %162 = "stablehlo.constant"() <{value = dense<1065353216> : tensor<ui32>}> : () -> tensor<ui32>
      %163 = "stablehlo.broadcast_in_dim"(%162) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %164 = "stablehlo.or"(%161, %163) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %165 = "stablehlo.bitcast_convert"(%164) : (tensor<128x64xui32>) -> tensor<128x64xf32>
      %166 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %167 = "stablehlo.broadcast_in_dim"(%166) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %168 = "stablehlo.subtract"(%165, %167) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %169 = "stablehlo.subtract"(%138, %137) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
      %170 = "stablehlo.broadcast_in_dim"(%169) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x64xf32>
      %171 = "stablehlo.multiply"(%168, %170) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %172 = "stablehlo.broadcast_in_dim"(%137) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x64xf32>
      %173 = "stablehlo.add"(%171, %172) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %174 = "stablehlo.broadcast_in_dim"(%137) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x64xf32>
      %175 = "stablehlo.maximum"(%174, %173) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%175) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<128x64xui32>, tensor<128x64xui32>) -> (tensor<128x64xui32>, tensor<128x64xui32>), sym_name = "threefry2x32_4", sym_visibility = "private"}> ({
    ^bb0(%arg26: tensor<ui32>, %arg27: tensor<ui32>, %arg28: tensor<128x64xui32>, %arg29: tensor<128x64xui32>):
      %119 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %120 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %121 = "stablehlo.xor"(%arg26, %arg27) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %122 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
      %123 = "stablehlo.xor"(%121, %122) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %124 = "stablehlo.broadcast_in_dim"(%arg26) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %125 = "stablehlo.add"(%arg28, %124) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %126 = "stablehlo.broadcast_in_dim"(%arg27) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %127 = "stablehlo.add"(%arg29, %126) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %128 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %129 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %130:9 = "stablehlo.while"(%129, %128, %125, %127, %arg27, %123, %arg26, %119, %120) ({
      ^bb0(%arg39: tensor<i32>, %arg40: tensor<i32>, %arg41: tensor<128x64xui32>, %arg42: tensor<128x64xui32>, %arg43: tensor<ui32>, %arg44: tensor<ui32>, %arg45: tensor<ui32>, %arg46: tensor<4xui32>, %arg47: tensor<4xui32>):
        %134 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
        %135 = "stablehlo.compare"(%arg39, %134) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%135) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg30: tensor<i32>, %arg31: tensor<i32>, %arg32: tensor<128x64xui32>, %arg33: tensor<128x64xui32>, %arg34: tensor<ui32>, %arg35: tensor<ui32>, %arg36: tensor<ui32>, %arg37: tensor<4xui32>, %arg38: tensor<4xui32>):
        %131:8 = "func.call"(%arg31, %arg32, %arg33, %arg34, %arg35, %arg36, %arg37, %arg38) <{callee = @closed_call_5}> : (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
        %132 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %133 = "stablehlo.add"(%arg30, %132) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%133, %131#0, %131#1, %131#2, %131#3, %131#4, %131#5, %131#6, %131#7) : (tensor<i32>, tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
      }) : (tensor<i32>, tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "func.return"(%130#2, %130#3) : (tensor<128x64xui32>, tensor<128x64xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call_5", sym_visibility = "private"}> ({
    ^bb0(%arg18: tensor<i32>, %arg19: tensor<128x64xui32>, %arg20: tensor<128x64xui32>, %arg21: tensor<ui32>, %arg22: tensor<ui32>, %arg23: tensor<ui32>, %arg24: tensor<4xui32>, %arg25: tensor<4xui32>):
      %64 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %65 = "stablehlo.add"(%arg18, %64) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %66 = "stablehlo.slice"(%arg24) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %67 = "stablehlo.reshape"(%66) : (tensor<1xui32>) -> tensor<ui32>
      %68 = "stablehlo.add"(%arg19, %arg20) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %69 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %70 = "stablehlo.shift_left"(%arg20, %69) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %71 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %72 = "stablehlo.subtract"(%71, %67) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %73 = "stablehlo.broadcast_in_dim"(%72) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %74 = "stablehlo.shift_right_logical"(%arg20, %73) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %75 = "stablehlo.or"(%70, %74) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %76 = "stablehlo.xor"(%68, %75) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %77 = "stablehlo.slice"(%arg24) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %78 = "stablehlo.reshape"(%77) : (tensor<1xui32>) -> tensor<ui32>
      %79 = "stablehlo.add"(%68, %76) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %80 = "stablehlo.broadcast_in_dim"(%78) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %81 = "stablehlo.shift_left"(%76, %80) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %82 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %83 = "stablehlo.subtract"(%82, %78) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %84 = "stablehlo.broadcast_in_dim"(%83) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %85 = "stablehlo.shift_right_logical"(%76, %84) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %86 = "stablehlo.or"(%81, %85) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %87 = "stablehlo.xor"(%79, %86) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %88 = "stablehlo.slice"(%arg24) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %89 = "stablehlo.reshape"(%88) : (tensor<1xui32>) -> tensor<ui32>
      %90 = "stablehlo.add"(%79, %87) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %91 = "stablehlo.broadcast_in_dim"(%89) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %92 = "stablehlo.shift_left"(%87, %91) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %93 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %94 = "stablehlo.subtract"(%93, %89) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %95 = "stablehlo.broadcast_in_dim"(%94) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %96 = "stablehlo.shift_right_logical"(%87, %95) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %97 = "stablehlo.or"(%92, %96) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %98 = "stablehlo.xor"(%90, %97) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %99 = "stablehlo.slice"(%arg24) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %100 = "stablehlo.reshape"(%99) : (tensor<1xui32>) -> tensor<ui32>
      %101 = "stablehlo.add"(%90, %98) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %102 = "stablehlo.broadcast_in_dim"(%100) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %103 = "stablehlo.shift_left"(%98, %102) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %104 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %105 = "stablehlo.subtract"(%104, %100) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %106 = "stablehlo.broadcast_in_dim"(%105) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %107 = "stablehlo.shift_right_logical"(%98, %106) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %108 = "stablehlo.or"(%103, %107) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %109 = "stablehlo.xor"(%101, %108) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %110 = "stablehlo.broadcast_in_dim"(%arg21) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %111 = "stablehlo.add"(%101, %110) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %112 = "stablehlo.broadcast_in_dim"(%arg22) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %113 = "stablehlo.add"(%109, %112) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %114 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %115 = "stablehlo.add"(%arg18, %114) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %116 = "stablehlo.convert"(%115) : (tensor<i32>) -> tensor<ui32>
      %117 = "stablehlo.broadcast_in_dim"(%116) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %118 = "stablehlo.add"(%113, %117) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      "func.return"(%65, %111, %118, %arg22, %arg23, %arg21, %arg25, %arg24) : (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<128x64xf32>) -> tensor<128xi32>, sym_name = "argmax", sym_visibility = "private"}> ({
    ^bb0(%arg13: tensor<128x64xf32>):
      %51 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<128x64xi32>
      %52 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %53 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %54:2 = "stablehlo.reduce"(%arg13, %51, %52, %53) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg14: tensor<f32>, %arg15: tensor<i32>, %arg16: tensor<f32>, %arg17: tensor<i32>):
        %55 = "stablehlo.compare"(%arg14, %arg16) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %56 = "stablehlo.compare"(%arg14, %arg14) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %57 = "stablehlo.or"(%55, %56) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        %58 = "stablehlo.compare"(%arg14, %arg16) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %59 = "stablehlo.compare"(%arg15, %arg17) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        %60 = "stablehlo.and"(%58, %59) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        %61 = "stablehlo.or"(%57, %60) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        %62 = "stablehlo.select"(%57, %arg14, %arg16) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
        %63 = "stablehlo.select"(%61, %arg15, %arg17) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%62, %63) : (tensor<f32>, tensor<i32>) -> ()
      }) : (tensor<128x64xf32>, tensor<128x64xi32>, tensor<f32>, tensor<i32>) -> (tensor<128xf32>, tensor<128xi32>)
      "func.return"(%54#1) : (tensor<128xi32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<128x64xf32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "log_softmax", sym_visibility = "private"}> ({
    ^bb0(%arg8: tensor<128x64xf32>):
      %34 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %35 = "stablehlo.reduce"(%arg8, %34) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
        %50 = "stablehlo.maximum"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%50) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %36 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %38 = "stablehlo.maximum"(%37, %35) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %39 = "stablehlo.broadcast_in_dim"(%38) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %41 = "stablehlo.subtract"(%arg8, %40) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %42 = "stablehlo.exponential"(%41) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %43 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %44 = "stablehlo.reduce"(%42, %43) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
        %49 = "stablehlo.add"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%49) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %45 = "stablehlo.broadcast_in_dim"(%44) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %46 = "stablehlo.log"(%45) : (tensor<128x1xf32>) -> tensor<128x1xf32>
      %47 = "stablehlo.broadcast_in_dim"(%46) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %48 = "stablehlo.subtract"(%41, %47) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%48) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<128x64xf32>, tensor<128x1xi32>) -> tensor<128x1xf32>, res_attrs = [{}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
    ^bb0(%arg4: tensor<128x64xf32>, %arg5: tensor<128x1xi32>):
      %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %13 = "stablehlo.compare"(%arg5, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi1>
      %14 = "stablehlo.constant"() <{value = dense<64> : tensor<i32>}> : () -> tensor<i32>
      %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %16 = "stablehlo.add"(%arg5, %15) : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %17 = "stablehlo.select"(%13, %16, %arg5) : (tensor<128x1xi1>, tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %18 = "stablehlo.reshape"(%17) : (tensor<128x1xi32>) -> tensor<128x1x1xi32>
      %19 = "stablehlo.constant"() <{value = dense<63> : tensor<1xi32>}> : () -> tensor<1xi32>
      %20 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1x1xi32>
      %22 = "stablehlo.compare"(%18, %21) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %23 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
      %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<128x1x1xi32>
      %25 = "stablehlo.compare"(%18, %24) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %26 = "stablehlo.and"(%22, %25) : (tensor<128x1x1xi1>, tensor<128x1x1xi1>) -> tensor<128x1x1xi1>
      %27 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %28 = "stablehlo.reduce"(%26, %27) <{dimensions = array<i64: 2>}> ({
      ^bb0(%arg6: tensor<i1>, %arg7: tensor<i1>):
        %33 = "stablehlo.and"(%arg6, %arg7) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%33) : (tensor<i1>) -> ()
      }) : (tensor<128x1x1xi1>, tensor<i1>) -> tensor<128x1xi1>
      %29 = "stablehlo.gather"(%arg4, %18) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<128x64xf32>, tensor<128x1x1xi32>) -> tensor<128x1xf32>
      %30 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x1xf32>
      %32 = "stablehlo.select"(%28, %29, %31) : (tensor<128x1xi1>, tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      "func.return"(%32) : (tensor<128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<128xi32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "_one_hot", sym_visibility = "private"}> ({
    ^bb0(%arg3: tensor<128xi32>):
      %5 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xi32>) -> tensor<128x1xi32>
      %6 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<1x64xi32>
      %7 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xi32>) -> tensor<128x64xi32>
      %8 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x64xi32>) -> tensor<128x64xi32>
      %9 = "stablehlo.compare"(%7, %8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<128x64xi32>, tensor<128x64xi32>) -> tensor<128x64xi1>
      %10 = "stablehlo.convert"(%9) : (tensor<128x64xi1>) -> tensor<128x64xf32>
      "func.return"(%10) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>), res_attrs = [{}, {}], sym_name = "closed_call_6", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<256x256xf32>, %arg1: tensor<i32>, %arg2: tensor<128x256xf32>):
      %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %1 = "stablehlo.add"(%arg1, %0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %2 = "stablehlo.dot_general"(%arg2, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %3 = "stablehlo.tanh"(%2) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %4 = "stablehlo.add"(%arg2, %3) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%1, %4) : (tensor<i32>, tensor<128x256xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_rl_train"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>, tensor<128xi32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg63: tensor<256x256xf32>, %arg64: tensor<256x64xf32>, %arg65: tensor<128x256xf32>, %arg66: tensor<128xi32>, %arg67: tensor<128xf32>, %arg68: tensor<128xf32>):
      %150 = "stablehlo.transpose"(%arg64) <{permutation = array<i64: 1, 0>}> : (tensor<256x64xf32>) -> tensor<64x256xf32>
      %151 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %152 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %153 = "stablehlo.broadcast_in_dim"(%152) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %154 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %155 = "stablehlo.broadcast_in_dim"(%154) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %156 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %157 = "stablehlo.broadcast_in_dim"(%156) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %158 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %159 = "stablehlo.broadcast_in_dim"(%158) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x64xf32>
      %160 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %161 = "stablehlo.broadcast_in_dim"(%160) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x1xf32>
      %162 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %163 = "stablehlo.broadcast_in_dim"(%162) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x1xf32>
      %164 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %165 = "stablehlo.broadcast_in_dim"(%164) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x64xf32>
      %166 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %167 = "stablehlo.broadcast_in_dim"(%166) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %168 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %169 = "stablehlo.broadcast_in_dim"(%168) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %170 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %171:15 = "stablehlo.while"(%arg63, %arg64, %150, %170, %151, %arg65, %153, %155, %157, %159, %161, %163, %165, %167, %169) ({
      ^bb0(%arg120: tensor<256x256xf32>, %arg121: tensor<256x64xf32>, %arg122: tensor<64x256xf32>, %arg123: tensor<i32>, %arg124: tensor<i32>, %arg125: tensor<128x256xf32>, %arg126: tensor<4x128x256xf32>, %arg127: tensor<4x128x256xf32>, %arg128: tensor<4x128x256xf32>, %arg129: tensor<4x128x64xf32>, %arg130: tensor<4x128x1xf32>, %arg131: tensor<4x128x1xf32>, %arg132: tensor<4x128x64xf32>, %arg133: tensor<4x128x256xf32>, %arg134: tensor<4x128x256xf32>):
        %265 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %266 = "stablehlo.compare"(%arg123, %265) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%266) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg105: tensor<256x256xf32>, %arg106: tensor<256x64xf32>, %arg107: tensor<64x256xf32>, %arg108: tensor<i32>, %arg109: tensor<i32>, %arg110: tensor<128x256xf32>, %arg111: tensor<4x128x256xf32>, %arg112: tensor<4x128x256xf32>, %arg113: tensor<4x128x256xf32>, %arg114: tensor<4x128x64xf32>, %arg115: tensor<4x128x1xf32>, %arg116: tensor<4x128x1xf32>, %arg117: tensor<4x128x64xf32>, %arg118: tensor<4x128x256xf32>, %arg119: tensor<4x128x256xf32>):
        %253:11 = "func.call"(%arg105, %arg106, %arg107, %arg109, %arg110) <{callee = @closed_call}> : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>)
        %254 = "func.call"(%arg111, %253#2, %arg108) <{callee = @dynamic_update_index_in_dim}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %255 = "func.call"(%arg112, %253#3, %arg108) <{callee = @dynamic_update_index_in_dim}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %256 = "func.call"(%arg113, %253#4, %arg108) <{callee = @dynamic_update_index_in_dim}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %257 = "func.call"(%arg114, %253#5, %arg108) <{callee = @dynamic_update_index_in_dim_0}> : (tensor<4x128x64xf32>, tensor<128x64xf32>, tensor<i32>) -> tensor<4x128x64xf32>
        %258 = "func.call"(%arg115, %253#6, %arg108) <{callee = @dynamic_update_index_in_dim_1}> : (tensor<4x128x1xf32>, tensor<128x1xf32>, tensor<i32>) -> tensor<4x128x1xf32>
        %259 = "func.call"(%arg116, %253#7, %arg108) <{callee = @dynamic_update_index_in_dim_1}> : (tensor<4x128x1xf32>, tensor<128x1xf32>, tensor<i32>) -> tensor<4x128x1xf32>
        %260 = "func.call"(%arg117, %253#8, %arg108) <{callee = @dynamic_update_index_in_dim_0}> : (tensor<4x128x64xf32>, tensor<128x64xf32>, tensor<i32>) -> tensor<4x128x64xf32>
        %261 = "func.call"(%arg118, %253#9, %arg108) <{callee = @dynamic_update_index_in_dim}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %262 = "func.call"(%arg119, %253#10, %arg108) <{callee = @dynamic_update_index_in_dim}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %263 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %264 = "stablehlo.add"(%arg108, %263) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg105, %arg106, %arg107, %264, %253#0, %253#1, %254, %255, %256, %257, %258, %259, %260, %261, %262) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>) -> ()
      }) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>)
      %172 = "stablehlo.dot_general"(%171#5, %arg63) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %173 = "stablehlo.tanh"(%172) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %174 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %175 = "stablehlo.broadcast_in_dim"(%174) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %176 = "stablehlo.subtract"(%175, %173) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %177 = "stablehlo.dot_general"(%173, %arg64) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %178:3 = "func.call"(%177) <{callee = @log_softmax}> : (tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x1xf32>)
      %179 = "stablehlo.broadcast_in_dim"(%arg66) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xi32>) -> tensor<128x1xi32>
      %180:2 = "func.call"(%178#0, %179) <{callee = @take_along_axis}> : (tensor<128x64xf32>, tensor<128x1xi32>) -> (tensor<128x1xf32>, tensor<128x1x1xi32>)
      %181 = "stablehlo.reshape"(%180#0) : (tensor<128x1xf32>) -> tensor<128xf32>
      %182 = "stablehlo.subtract"(%181, %arg67) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %183 = "stablehlo.exponential"(%182) : (tensor<128xf32>) -> tensor<128xf32>
      %184 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %185 = "stablehlo.reduce"(%arg68, %184) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg103: tensor<f32>, %arg104: tensor<f32>):
        %252 = "stablehlo.add"(%arg103, %arg104) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%252) : (tensor<f32>) -> ()
      }) : (tensor<128xf32>, tensor<f32>) -> tensor<f32>
      %186 = "stablehlo.constant"() <{value = dense<1.280000e+02> : tensor<f32>}> : () -> tensor<f32>
      %187 = "stablehlo.divide"(%185, %186) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %188 = "stablehlo.broadcast_in_dim"(%187) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %189 = "stablehlo.subtract"(%arg68, %188) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %190 = "stablehlo.multiply"(%189, %183) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %191 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %192 = "stablehlo.reduce"(%190, %191) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg101: tensor<f32>, %arg102: tensor<f32>):
        %251 = "stablehlo.add"(%arg101, %arg102) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%251) : (tensor<f32>) -> ()
      }) : (tensor<128xf32>, tensor<f32>) -> tensor<f32>
      %193 = "stablehlo.constant"() <{value = dense<1.280000e+02> : tensor<f32>}> : () -> tensor<f32>
      %194 = "stablehlo.divide"(%192, %193) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %195 = "stablehlo.negate"(%194) : (tensor<f32>) -> tensor<f32>
      %196 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %197 = "stablehlo.broadcast_in_dim"(%196) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %198 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %199 = "stablehlo.negate"(%198) : (tensor<f32>) -> tensor<f32>
      %200 = "stablehlo.constant"() <{value = dense<1.280000e+02> : tensor<f32>}> : () -> tensor<f32>
      %201 = "stablehlo.divide"(%199, %200) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %202 = "stablehlo.broadcast_in_dim"(%201) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %203 = "stablehlo.multiply"(%189, %202) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %204 = "stablehlo.multiply"(%203, %183) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %205 = "stablehlo.broadcast_in_dim"(%204) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %206 = "func.call"(%180#1, %205) <{callee = @take_along_axis_2}> : (tensor<128x1x1xi32>, tensor<128x1xf32>) -> tensor<128x64xf32>
      %207 = "func.call"(%178#1, %178#2, %206) <{callee = @log_softmax_3}> : (tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %208 = "stablehlo.dot_general"(%207, %173) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
      %209 = "stablehlo.transpose"(%208) <{permutation = array<i64: 1, 0>}> : (tensor<64x256xf32>) -> tensor<256x64xf32>
      %210 = "stablehlo.dot_general"(%207, %arg64) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<256x64xf32>) -> tensor<128x256xf32>
      %211 = "stablehlo.multiply"(%210, %176) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %212 = "stablehlo.multiply"(%211, %173) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %213 = "stablehlo.add"(%211, %212) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %214 = "stablehlo.dot_general"(%213, %171#5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<256x256xf32>
      %215 = "stablehlo.transpose"(%214) <{permutation = array<i64: 1, 0>}> : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %216 = "stablehlo.dot_general"(%213, %arg63) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %217 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %218 = "stablehlo.broadcast_in_dim"(%217) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
      %219 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %220 = "stablehlo.broadcast_in_dim"(%219) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x64xf32>
      %221 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %222:16 = "stablehlo.while"(%171#6, %171#7, %171#8, %171#9, %171#10, %171#11, %171#12, %171#13, %171#14, %arg63, %arg64, %150, %221, %218, %220, %216) ({
      ^bb0(%arg85: tensor<4x128x256xf32>, %arg86: tensor<4x128x256xf32>, %arg87: tensor<4x128x256xf32>, %arg88: tensor<4x128x64xf32>, %arg89: tensor<4x128x1xf32>, %arg90: tensor<4x128x1xf32>, %arg91: tensor<4x128x64xf32>, %arg92: tensor<4x128x256xf32>, %arg93: tensor<4x128x256xf32>, %arg94: tensor<256x256xf32>, %arg95: tensor<256x64xf32>, %arg96: tensor<64x256xf32>, %arg97: tensor<i32>, %arg98: tensor<256x256xf32>, %arg99: tensor<256x64xf32>, %arg100: tensor<128x256xf32>):
        %249 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %250 = "stablehlo.compare"(%arg97, %249) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%250) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg69: tensor<4x128x256xf32>, %arg70: tensor<4x128x256xf32>, %arg71: tensor<4x128x256xf32>, %arg72: tensor<4x128x64xf32>, %arg73: tensor<4x128x1xf32>, %arg74: tensor<4x128x1xf32>, %arg75: tensor<4x128x64xf32>, %arg76: tensor<4x128x256xf32>, %arg77: tensor<4x128x256xf32>, %arg78: tensor<256x256xf32>, %arg79: tensor<256x64xf32>, %arg80: tensor<64x256xf32>, %arg81: tensor<i32>, %arg82: tensor<256x256xf32>, %arg83: tensor<256x64xf32>, %arg84: tensor<128x256xf32>):
        %233 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %234 = "stablehlo.subtract"(%233, %arg81) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %235 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %236 = "stablehlo.subtract"(%234, %235) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %237 = "func.call"(%arg69, %236) <{callee = @dynamic_index_in_dim}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %238 = "func.call"(%arg70, %236) <{callee = @dynamic_index_in_dim}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %239 = "func.call"(%arg71, %236) <{callee = @dynamic_index_in_dim}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %240 = "func.call"(%arg72, %236) <{callee = @dynamic_index_in_dim_4}> : (tensor<4x128x64xf32>, tensor<i32>) -> tensor<128x64xf32>
        %241 = "func.call"(%arg73, %236) <{callee = @dynamic_index_in_dim_5}> : (tensor<4x128x1xf32>, tensor<i32>) -> tensor<128x1xf32>
        %242 = "func.call"(%arg74, %236) <{callee = @dynamic_index_in_dim_5}> : (tensor<4x128x1xf32>, tensor<i32>) -> tensor<128x1xf32>
        %243 = "func.call"(%arg75, %236) <{callee = @dynamic_index_in_dim_4}> : (tensor<4x128x64xf32>, tensor<i32>) -> tensor<128x64xf32>
        %244 = "func.call"(%arg76, %236) <{callee = @dynamic_index_in_dim}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %245 = "func.call"(%arg77, %236) <{callee = @dynamic_index_in_dim}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %246:3 = "func.call"(%arg78, %arg79, %arg80, %arg82, %arg83, %arg84, %237, %238, %239, %240, %241, %242, %243, %244, %245) <{callee = @closed_call_6}> : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>)
        %247 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %248 = "stablehlo.add"(%arg81, %247) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg69, %arg70, %arg71, %arg72, %arg73, %arg74, %arg75, %arg76, %arg77, %arg78, %arg79, %arg80, %248, %246#0, %246#1, %246#2) : (tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>) -> ()
      }) : (tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>) -> (tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>)
      %223 = "stablehlo.add"(%215, %222#13) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %224 = "stablehlo.add"(%209, %222#14) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %225 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %226 = "stablehlo.broadcast_in_dim"(%225) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
      %227 = "stablehlo.multiply"(%226, %223) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %228 = "stablehlo.subtract"(%arg63, %227) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %229 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %230 = "stablehlo.broadcast_in_dim"(%229) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x64xf32>
      %231 = "stablehlo.multiply"(%230, %224) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %232 = "stablehlo.subtract"(%arg64, %231) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      "func.return"(%228, %232) : (tensor<256x256xf32>, tensor<256x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
    ^bb0(%arg54: tensor<256x256xf32>, %arg55: tensor<256x64xf32>, %arg56: tensor<64x256xf32>, %arg57: tensor<i32>, %arg58: tensor<128x256xf32>):
      %116 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %117 = "stablehlo.add"(%arg57, %116) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %118 = "stablehlo.dot_general"(%arg58, %arg54) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %119 = "stablehlo.tanh"(%118) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %120 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %121 = "stablehlo.broadcast_in_dim"(%120) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %122 = "stablehlo.subtract"(%121, %119) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %123 = "stablehlo.dot_general"(%119, %arg55) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %124 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %125 = "stablehlo.reduce"(%123, %124) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg61: tensor<f32>, %arg62: tensor<f32>):
        %149 = "stablehlo.maximum"(%arg61, %arg62) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%149) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %126 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %127 = "stablehlo.broadcast_in_dim"(%126) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %128 = "stablehlo.maximum"(%127, %125) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %129 = "stablehlo.broadcast_in_dim"(%128) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %130 = "stablehlo.broadcast_in_dim"(%129) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %131 = "stablehlo.subtract"(%123, %130) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %132 = "stablehlo.exponential"(%131) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %133 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %134 = "stablehlo.reduce"(%132, %133) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg59: tensor<f32>, %arg60: tensor<f32>):
        %148 = "stablehlo.add"(%arg59, %arg60) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%148) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %135 = "stablehlo.broadcast_in_dim"(%134) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %136 = "stablehlo.broadcast_in_dim"(%135) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %137 = "stablehlo.divide"(%132, %136) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %138 = "stablehlo.multiply"(%135, %135) : (tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      %139 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %140 = "stablehlo.broadcast_in_dim"(%139) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x1xf32>
      %141 = "stablehlo.divide"(%140, %138) : (tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      %142 = "stablehlo.dot_general"(%137, %arg56) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
      %143 = "stablehlo.add"(%arg58, %142) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %144 = "stablehlo.tanh"(%143) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %145 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %146 = "stablehlo.broadcast_in_dim"(%145) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %147 = "stablehlo.subtract"(%146, %144) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%117, %144, %arg58, %119, %122, %132, %135, %141, %137, %144, %147) : (tensor<i32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
    ^bb0(%arg51: tensor<4x128x256xf32>, %arg52: tensor<128x256xf32>, %arg53: tensor<i32>):
      %112 = "stablehlo.broadcast_in_dim"(%arg52) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x256xf32>) -> tensor<1x128x256xf32>
      %113 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %114 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %115 = "stablehlo.dynamic_update_slice"(%arg51, %112, %arg53, %113, %114) : (tensor<4x128x256xf32>, tensor<1x128x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x256xf32>
      "func.return"(%115) : (tensor<4x128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x64xf32>, tensor<128x64xf32>, tensor<i32>) -> tensor<4x128x64xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim_0", sym_visibility = "private"}> ({
    ^bb0(%arg48: tensor<4x128x64xf32>, %arg49: tensor<128x64xf32>, %arg50: tensor<i32>):
      %108 = "stablehlo.broadcast_in_dim"(%arg49) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x64xf32>) -> tensor<1x128x64xf32>
      %109 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %110 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %111 = "stablehlo.dynamic_update_slice"(%arg48, %108, %arg50, %109, %110) : (tensor<4x128x64xf32>, tensor<1x128x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x64xf32>
      "func.return"(%111) : (tensor<4x128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x1xf32>, tensor<128x1xf32>, tensor<i32>) -> tensor<4x128x1xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim_1", sym_visibility = "private"}> ({
    ^bb0(%arg45: tensor<4x128x1xf32>, %arg46: tensor<128x1xf32>, %arg47: tensor<i32>):
      %104 = "stablehlo.broadcast_in_dim"(%arg46) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x1xf32>) -> tensor<1x128x1xf32>
      %105 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %106 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %107 = "stablehlo.dynamic_update_slice"(%arg45, %104, %arg47, %105, %106) : (tensor<4x128x1xf32>, tensor<1x128x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x1xf32>
      "func.return"(%107) : (tensor<4x128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x1xf32>), res_attrs = [{}, {}, {}], sym_name = "log_softmax", sym_visibility = "private"}> ({
    ^bb0(%arg40: tensor<128x64xf32>):
      %87 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %88 = "stablehlo.reduce"(%arg40, %87) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg43: tensor<f32>, %arg44: tensor<f32>):
        %103 = "stablehlo.maximum"(%arg43, %arg44) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%103) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %89 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %90 = "stablehlo.broadcast_in_dim"(%89) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %91 = "stablehlo.maximum"(%90, %88) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %92 = "stablehlo.broadcast_in_dim"(%91) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %93 = "stablehlo.broadcast_in_dim"(%92) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %94 = "stablehlo.subtract"(%arg40, %93) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %95 = "stablehlo.exponential"(%94) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %96 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %97 = "stablehlo.reduce"(%95, %96) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg41: tensor<f32>, %arg42: tensor<f32>):
        %102 = "stablehlo.add"(%arg41, %arg42) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%102) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %98 = "stablehlo.broadcast_in_dim"(%97) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %99 = "stablehlo.log"(%98) : (tensor<128x1xf32>) -> tensor<128x1xf32>
      %100 = "stablehlo.broadcast_in_dim"(%99) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %101 = "stablehlo.subtract"(%94, %100) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%101, %95, %98) : (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<128x64xf32>, tensor<128x1xi32>) -> (tensor<128x1xf32>, tensor<128x1x1xi32>), res_attrs = [{}, {}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
    ^bb0(%arg36: tensor<128x64xf32>, %arg37: tensor<128x1xi32>):
      %64 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %65 = "stablehlo.broadcast_in_dim"(%64) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %66 = "stablehlo.compare"(%arg37, %65) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi1>
      %67 = "stablehlo.constant"() <{value = dense<64> : tensor<i32>}> : () -> tensor<i32>
      %68 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %69 = "stablehlo.add"(%arg37, %68) : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %70 = "stablehlo.select"(%66, %69, %arg37) : (tensor<128x1xi1>, tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %71 = "stablehlo.reshape"(%70) : (tensor<128x1xi32>) -> tensor<128x1x1xi32>
      %72 = "stablehlo.constant"() <{value = dense<63> : tensor<1xi32>}> : () -> tensor<1xi32>
      %73 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %74 = "stablehlo.broadcast_in_dim"(%73) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1x1xi32>
      %75 = "stablehlo.compare"(%71, %74) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %76 = "stablehlo.broadcast_in_dim"(%72) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
      %77 = "stablehlo.broadcast_in_dim"(%76) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<128x1x1xi32>
      %78 = "stablehlo.compare"(%71, %77) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %79 = "stablehlo.and"(%75, %78) : (tensor<128x1x1xi1>, tensor<128x1x1xi1>) -> tensor<128x1x1xi1>
      %80 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %81 = "stablehlo.reduce"(%79, %80) <{dimensions = array<i64: 2>}> ({
      ^bb0(%arg38: tensor<i1>, %arg39: tensor<i1>):
        %86 = "stablehlo.and"(%arg38, %arg39) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%86) : (tensor<i1>) -> ()
      }) : (tensor<128x1x1xi1>, tensor<i1>) -> tensor<128x1xi1>
      %82 = "stablehlo.gather"(%arg36, %71) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<128x64xf32>, tensor<128x1x1xi32>) -> tensor<128x1xf32>
      %83 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %84 = "stablehlo.broadcast_in_dim"(%83) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x1xf32>
      %85 = "stablehlo.select"(%81, %82, %84) : (tensor<128x1xi1>, tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      "func.return"(%85, %71) : (tensor<128x1xf32>, tensor<128x1x1xi32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<128x1x1xi32>, tensor<128x1xf32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "take_along_axis_2", sym_visibility = "private"}> ({
    ^bb0(%arg32: tensor<128x1x1xi32>, %arg33: tensor<128x1xf32>):
      %60 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %61 = "stablehlo.broadcast_in_dim"(%60) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %62 = "stablehlo.scatter"(%61, %arg32, %arg33) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
      ^bb0(%arg34: tensor<f32>, %arg35: tensor<f32>):
        %63 = "stablehlo.add"(%arg34, %arg35) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%63) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<128x1x1xi32>, tensor<128x1xf32>) -> tensor<128x64xf32>
      "func.return"(%62) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "log_softmax_3", sym_visibility = "private"}> ({
    ^bb0(%arg25: tensor<128x64xf32>, %arg26: tensor<128x1xf32>, %arg27: tensor<128x64xf32>):
      %48 = "stablehlo.negate"(%arg27) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %49 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %50 = "stablehlo.reduce"(%48, %49) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
        %59 = "stablehlo.add"(%arg30, %arg31) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%59) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %51 = "stablehlo.reshape"(%50) : (tensor<128xf32>) -> tensor<128x1xf32>
      %52 = "stablehlo.divide"(%51, %arg26) : (tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      %53 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %54 = "stablehlo.reduce"(%52, %53) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg28: tensor<f32>, %arg29: tensor<f32>):
        %58 = "stablehlo.add"(%arg28, %arg29) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%58) : (tensor<f32>) -> ()
      }) : (tensor<128x1xf32>, tensor<f32>) -> tensor<128xf32>
      %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x64xf32>
      %56 = "stablehlo.multiply"(%55, %arg25) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %57 = "stablehlo.add"(%arg27, %56) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%57) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
    ^bb0(%arg23: tensor<4x128x256xf32>, %arg24: tensor<i32>):
      %44 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %45 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %46 = "stablehlo.dynamic_slice"(%arg23, %arg24, %44, %45) <{slice_sizes = array<i64: 1, 128, 256>}> : (tensor<4x128x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x256xf32>
      %47 = "stablehlo.reshape"(%46) : (tensor<1x128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%47) : (tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x64xf32>, tensor<i32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim_4", sym_visibility = "private"}> ({
    ^bb0(%arg21: tensor<4x128x64xf32>, %arg22: tensor<i32>):
      %40 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %41 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %42 = "stablehlo.dynamic_slice"(%arg21, %arg22, %40, %41) <{slice_sizes = array<i64: 1, 128, 64>}> : (tensor<4x128x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x64xf32>
      %43 = "stablehlo.reshape"(%42) : (tensor<1x128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%43) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x1xf32>, tensor<i32>) -> tensor<128x1xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim_5", sym_visibility = "private"}> ({
    ^bb0(%arg19: tensor<4x128x1xf32>, %arg20: tensor<i32>):
      %36 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %37 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %38 = "stablehlo.dynamic_slice"(%arg19, %arg20, %36, %37) <{slice_sizes = array<i64: 1, 128, 1>}> : (tensor<4x128x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x1xf32>
      %39 = "stablehlo.reshape"(%38) : (tensor<1x128x1xf32>) -> tensor<128x1xf32>
      "func.return"(%39) : (tensor<128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>), res_attrs = [{}, {}, {}], sym_name = "closed_call_6", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<256x256xf32>, %arg1: tensor<256x64xf32>, %arg2: tensor<64x256xf32>, %arg3: tensor<256x256xf32>, %arg4: tensor<256x64xf32>, %arg5: tensor<128x256xf32>, %arg6: tensor<128x256xf32>, %arg7: tensor<128x256xf32>, %arg8: tensor<128x256xf32>, %arg9: tensor<128x64xf32>, %arg10: tensor<128x1xf32>, %arg11: tensor<128x1xf32>, %arg12: tensor<128x64xf32>, %arg13: tensor<128x256xf32>, %arg14: tensor<128x256xf32>):
      %0 = "stablehlo.multiply"(%arg5, %arg14) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %1 = "stablehlo.multiply"(%0, %arg13) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %2 = "stablehlo.add"(%0, %1) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %3 = "stablehlo.dot_general"(%2, %arg12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<128x64xf32>) -> tensor<256x64xf32>
      %4 = "stablehlo.transpose"(%3) <{permutation = array<i64: 1, 0>}> : (tensor<256x64xf32>) -> tensor<64x256xf32>
      %5 = "stablehlo.dot_general"(%2, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<64x256xf32>) -> tensor<128x64xf32>
      %6 = "stablehlo.transpose"(%4) <{permutation = array<i64: 1, 0>}> : (tensor<64x256xf32>) -> tensor<256x64xf32>
      %7 = "stablehlo.add"(%arg4, %6) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %8 = "stablehlo.broadcast_in_dim"(%arg11) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %9 = "stablehlo.multiply"(%5, %8) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %10 = "stablehlo.multiply"(%9, %arg9) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg17: tensor<f32>, %arg18: tensor<f32>):
        %35 = "stablehlo.add"(%arg17, %arg18) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%35) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %13 = "stablehlo.reshape"(%12) : (tensor<128xf32>) -> tensor<128x1xf32>
      %14 = "stablehlo.negate"(%13) : (tensor<128x1xf32>) -> tensor<128x1xf32>
      %15 = "stablehlo.broadcast_in_dim"(%arg10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %16 = "stablehlo.divide"(%5, %15) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %17 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %18 = "stablehlo.reduce"(%14, %17) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
        %34 = "stablehlo.add"(%arg15, %arg16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%34) : (tensor<f32>) -> ()
      }) : (tensor<128x1xf32>, tensor<f32>) -> tensor<128xf32>
      %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x64xf32>
      %20 = "stablehlo.add"(%16, %19) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %21 = "stablehlo.multiply"(%20, %arg9) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %22 = "stablehlo.dot_general"(%21, %arg7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
      %23 = "stablehlo.transpose"(%22) <{permutation = array<i64: 1, 0>}> : (tensor<64x256xf32>) -> tensor<256x64xf32>
      %24 = "stablehlo.add"(%7, %23) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %25 = "stablehlo.dot_general"(%21, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<256x64xf32>) -> tensor<128x256xf32>
      %26 = "stablehlo.multiply"(%25, %arg8) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %27 = "stablehlo.multiply"(%26, %arg7) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %28 = "stablehlo.add"(%26, %27) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %29 = "stablehlo.dot_general"(%28, %arg6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<256x256xf32>
      %30 = "stablehlo.transpose"(%29) <{permutation = array<i64: 1, 0>}> : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %31 = "stablehlo.add"(%arg3, %30) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %32 = "stablehlo.dot_general"(%28, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %33 = "stablehlo.add"(%2, %32) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%31, %24, %33) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  func.func @main(%arg0: !pw.array<256x256xf32>, %arg1: !pw.array<256x64xf32>, %arg2: !pw.array<320x256xf32>, %arg3: !pw.array<256x256xf32>, %arg4: !pw.array<256xf32>, %arg5: !pw.array<ui32>, %arg6: !pw.array<ui32>, %arg7: !pw.array<ui32>, %arg8: !pw.array<ui32>, %arg9: !pw.array<ui32>, %arg10: !pw.array<ui32>, %arg11: !pw.array<ui32>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) {
    %0:4 = pw.call @jit_rl_sample(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) on @sampler : (!pw.array<256x256xf32>, !pw.array<256x64xf32>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %1:4 = pw.call @jit_rl_sample(%arg0, %arg1, %arg2, %arg3, %arg4, %arg6) on @sampler : (!pw.array<256x256xf32>, !pw.array<256x64xf32>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %2:2 = pw.call @jit_rl_train(%arg0, %arg1, %0#0, %0#1, %0#2, %0#3) on @trainer : (!pw.array<256x256xf32>, !pw.array<256x64xf32>, !pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %3:4 = pw.call @jit_rl_sample(%2#0, %2#1, %arg2, %arg3, %arg4, %arg7) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %4:2 = pw.call @jit_rl_train(%2#0, %2#1, %1#0, %1#1, %1#2, %1#3) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %5:4 = pw.call @jit_rl_sample(%4#0, %4#1, %arg2, %arg3, %arg4, %arg8) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %6:2 = pw.call @jit_rl_train(%4#0, %4#1, %3#0, %3#1, %3#2, %3#3) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %7:4 = pw.call @jit_rl_sample(%6#0, %6#1, %arg2, %arg3, %arg4, %arg9) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %8:2 = pw.call @jit_rl_train(%6#0, %6#1, %5#0, %5#1, %5#2, %5#3) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %9:4 = pw.call @jit_rl_sample(%8#0, %8#1, %arg2, %arg3, %arg4, %arg10) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %10:2 = pw.call @jit_rl_train(%8#0, %8#1, %7#0, %7#1, %7#2, %7#3) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %11:4 = pw.call @jit_rl_sample(%10#0, %10#1, %arg2, %arg3, %arg4, %arg11) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x256xf32>, !pw.array<256x256xf32>, !pw.array<256xf32>, !pw.array<ui32>) -> (!pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %12:2 = pw.call @jit_rl_train(%10#0, %10#1, %9#0, %9#1, %9#2, %9#3) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32, @sampler>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    return %12#0, %12#1, %0#3, %1#3, %3#3, %5#3, %7#3, %9#3, %11#3 : !pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>
  }
}
