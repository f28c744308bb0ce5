module @rl_loop {
  pw.mesh @sampler ["x"=1]
  pw.mesh @trainer ["x"=1]
  "builtin.module"() <{sym_name = "jit_rl_sample"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, []>}], function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<320x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<128x256xf32>, tensor<ui32>) -> (tensor<128xi32>, tensor<128xf32>, tensor<128xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg57: tensor<256x256xf32>, %arg58: tensor<256x64xf32>, %arg59: tensor<320x1024xf32>, %arg60: tensor<1024x1024xf32>, %arg61: tensor<1024xf32>, %arg62: tensor<128x256xf32>, %arg63: tensor<ui32>):
      %203 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %204 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %205:5 = "stablehlo.while"(%arg57, %arg58, %204, %203, %arg62) ({
      ^bb0(%arg69: tensor<256x256xf32>, %arg70: tensor<256x64xf32>, %arg71: tensor<i32>, %arg72: tensor<i32>, %arg73: tensor<128x256xf32>):
        %234 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %235 = "stablehlo.compare"(%arg71, %234) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%235) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg64: tensor<256x256xf32>, %arg65: tensor<256x64xf32>, %arg66: tensor<i32>, %arg67: tensor<i32>, %arg68: tensor<128x256xf32>):
        %231:2 = "func.call"(%arg64, %arg65, %arg67, %arg68) <{callee = @closed_call}> : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>)
        %232 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %233 = "stablehlo.add"(%arg66, %232) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg64, %arg65, %233, %231#0, %231#1) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>) -> ()
      }) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>)
      %206 = "stablehlo.dot_general"(%205#4, %arg57) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %207 = "stablehlo.tanh"(%206) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %208 = "stablehlo.dot_general"(%207, %arg58) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %209 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %210 = "stablehlo.shift_right_logical"(%arg63, %209) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %211 = "stablehlo.broadcast_in_dim"(%210) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<1xui32>
      %212 = "stablehlo.constant"() <{value = dense<4294967295> : tensor<ui32>}> : () -> tensor<ui32>
      %213 = "stablehlo.and"(%arg63, %212) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %214 = "stablehlo.broadcast_in_dim"(%213) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<1xui32>
      %215 = "stablehlo.concatenate"(%211, %214) <{dimension = 0 : i64}> : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
      %216 = "func.call"(%215) <{callee = @_gumbel}> : (tensor<2xui32>) -> tensor<128x64xf32>
      %217 = "stablehlo.add"(%216, %208) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %218 = "func.call"(%217) <{callee = @argmax}> : (tensor<128x64xf32>) -> tensor<128xi32>
      %219 = "func.call"(%208) <{callee = @log_softmax}> : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %220 = "stablehlo.broadcast_in_dim"(%218) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xi32>) -> tensor<128x1xi32>
      %221 = "func.call"(%219, %220) <{callee = @take_along_axis}> : (tensor<128x64xf32>, tensor<128x1xi32>) -> tensor<128x1xf32>
      %222 = "stablehlo.reshape"(%221) : (tensor<128x1xf32>) -> tensor<128xf32>
      %223 = "func.call"(%218) <{callee = @_one_hot}> : (tensor<128xi32>) -> tensor<128x64xf32>
      %224 = "stablehlo.concatenate"(%arg62, %223) <{dimension = 1 : i64}> : (tensor<128x256xf32>, tensor<128x64xf32>) -> tensor<128x320xf32>
      %225 = "stablehlo.dot_general"(%224, %arg59) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x320xf32>, tensor<320x1024xf32>) -> tensor<128x1024xf32>
      %226 = "stablehlo.tanh"(%225) : (tensor<128x1024xf32>) -> tensor<128x1024xf32>
      %227 = "stablehlo.dot_general"(%226, %arg60) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x1024xf32>, tensor<1024x1024xf32>) -> tensor<128x1024xf32>
      %228 = "stablehlo.tanh"(%227) : (tensor<128x1024xf32>) -> tensor<128x1024xf32>
      %229 = "stablehlo.dot_general"(%228, %arg61) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x1024xf32>, tensor<1024xf32>) -> tensor<128xf32>
      %230 = "stablehlo.tanh"(%229) : (tensor<128xf32>) -> tensor<128xf32>
      "func.return"(%218, %222, %230) : (tensor<128xi32>, tensor<128xf32>, tensor<128xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>), res_attrs = [{}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
    ^bb0(%arg49: tensor<256x256xf32>, %arg50: tensor<256x64xf32>, %arg51: tensor<i32>, %arg52: tensor<128x256xf32>):
      %178 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %179 = "stablehlo.add"(%arg51, %178) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %180 = "stablehlo.dot_general"(%arg52, %arg49) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %181 = "stablehlo.tanh"(%180) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %182 = "stablehlo.dot_general"(%181, %arg50) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %183 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %184 = "stablehlo.reduce"(%182, %183) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg55: tensor<f32>, %arg56: tensor<f32>):
        %202 = "stablehlo.maximum"(%arg55, %arg56) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%202) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %185 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %186 = "stablehlo.broadcast_in_dim"(%185) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %187 = "stablehlo.maximum"(%186, %184) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %188 = "stablehlo.broadcast_in_dim"(%187) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %189 = "stablehlo.broadcast_in_dim"(%188) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %190 = "stablehlo.subtract"(%182, %189) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %191 = "stablehlo.exponential"(%190) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %192 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %193 = "stablehlo.reduce"(%191, %192) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg53: tensor<f32>, %arg54: tensor<f32>):
        %201 = "stablehlo.add"(%arg53, %arg54) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%201) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %194 = "stablehlo.broadcast_in_dim"(%193) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %195 = "stablehlo.broadcast_in_dim"(%194) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %196 = "stablehlo.divide"(%191, %195) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %197 = "stablehlo.transpose"(%arg50) <{permutation = array<i64: 1, 0>}> : (tensor<256x64xf32>) -> tensor<64x256xf32>
      %198 = "stablehlo.dot_general"(%196, %197) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
      %199 = "stablehlo.add"(%arg52, %198) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %200 = "stablehlo.tanh"(%199) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%179, %200) : (tensor<i32>, tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<2xui32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "_gumbel", sym_visibility = "private"}> ({
    ^bb0(%arg48: tensor<2xui32>):
      %171 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %172 = "stablehlo.constant"() <{value = dense<1.17549435E-38> : tensor<f32>}> : () -> tensor<f32>
      %173 = "func.call"(%arg48, %171, %172) <{callee = @_uniform}> : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
      %174 = "stablehlo.log"(%173) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %175 = "stablehlo.negate"(%174) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %176 = "stablehlo.log"(%175) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %177 = "stablehlo.negate"(%176) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%177) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "_uniform", sym_visibility = "private"}> ({
    ^bb0(%arg45: tensor<2xui32>, %arg46: tensor<f32>, %arg47: tensor<f32>):
      %131 = "stablehlo.convert"(%arg46) : (tensor<f32>) -> tensor<f32>
      %132 = "stablehlo.broadcast_in_dim"(%arg47) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
      %133 = "stablehlo.broadcast_in_dim"(%131) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x1xf32>
      %134 = "stablehlo.slice"(%arg45) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %135 = "stablehlo.reshape"(%134) : (tensor<1xui32>) -> tensor<ui32>
      %136 = "stablehlo.slice"(%arg45) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<2xui32>) -> tensor<1xui32>
      %137 = "stablehlo.reshape"(%136) : (tensor<1xui32>) -> tensor<ui32>
      %138 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<128x64xui64>
      %139 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<128x64xui64>
      %140 = "stablehlo.constant"() <{value = dense<64> : tensor<ui64>}> : () -> tensor<ui64>
      %141 = "stablehlo.broadcast_in_dim"(%140) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x64xui64>
      %142 = "stablehlo.multiply"(%141, %138) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %143 = "stablehlo.constant"() <{value = dense<1> : tensor<ui64>}> : () -> tensor<ui64>
      %144 = "stablehlo.broadcast_in_dim"(%143) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x64xui64>
      %145 = "stablehlo.multiply"(%144, %139) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %146 = "stablehlo.add"(%142, %145) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %147 = "stablehlo.constant"() <{value = dense<32> : tensor<ui64>}> : () -> tensor<ui64>
      %148 = "stablehlo.broadcast_in_dim"(%147) <{broadcast_dimensions = array<i64>}> : (tensor<ui64>) -> tensor<128x64xui64>
      %149 = "stablehlo.shift_right_logical"(%146, %148) : (tensor<128x64xui64>, tensor<128x64xui64>) -> tensor<128x64xui64>
      %150 = "stablehlo.convert"(%146) : (tensor<128x64xui64>) -> tensor<128x64xui32>
      %151 = "stablehlo.convert"(%149) : (tensor<128x64xui64>) -> tensor<128x64xui32>
      %152:2 = "func.call"(%135, %137, %151, %150) <{callee = @threefry2x32}> : (tensor<ui32>, tensor<ui32>, tensor<128x64xui32>, tensor<128x64xui32>) -> (tensor<128x64xui32>, tensor<128x64xui32>)
      %153 = "stablehlo.xor"(%152#0, %152#1) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %154 = "stablehlo.constant"() <{value = dense<9> : tensor<ui32>}> : () -> tensor<ui32>
      %155 = "stablehlo.broadcast_in_dim"(%154) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %156 = "stablehlo.shift_right_logical"(%153, %155) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %157 = "stablehlo.constant"() <{value = dense<1065353216> : tensor<ui32>}> : () -> tensor<ui32>
      %158 = "stablehlo.broadcast_in_dim"(%157) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %159 = "stablehlo.or"(%156, %158) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %160 = "stablehlo.bitcast_convert"(%159) : (tensor<128x64xui32>) -> tensor<128x64xf32>
      %161 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %162 = "stablehlo.broadcast_in_dim"(%161) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %163 = "stablehlo.subtract"(%160, %162) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %164 = "stablehlo.subtract"(%133, %132) : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
      %165 = "stablehlo.broadcast_in_dim"(%164) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x64xf32>
      %166 = "stablehlo.multiply"(%163, %165) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %167 = "stablehlo.broadcast_in_dim"(%132) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x64xf32>
      %168 = "stablehlo.add"(%166, %167) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %169 = "stablehlo.broadcast_in_dim"(%132) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xf32>) -> tensor<128x64xf32>
      %170 = "stablehlo.maximum"(%169, %168) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%170) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<ui32>, tensor<ui32>, tensor<128x64xui32>, tensor<128x64xui32>) -> (tensor<128x64xui32>, tensor<128x64xui32>), sym_name = "threefry2x32", sym_visibility = "private"}> ({
    ^bb0(%arg23: tensor<ui32>, %arg24: tensor<ui32>, %arg25: tensor<128x64xui32>, %arg26: tensor<128x64xui32>):
      %114 = "stablehlo.constant"() <{value = dense<[13, 15, 26, 6]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %115 = "stablehlo.constant"() <{value = dense<[17, 29, 16, 24]> : tensor<4xui32>}> : () -> tensor<4xui32>
      %116 = "stablehlo.xor"(%arg23, %arg24) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %117 = "stablehlo.constant"() <{value = dense<466688986> : tensor<ui32>}> : () -> tensor<ui32>
      %118 = "stablehlo.xor"(%116, %117) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %119 = "stablehlo.broadcast_in_dim"(%arg23) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %120 = "stablehlo.add"(%arg25, %119) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %121 = "stablehlo.broadcast_in_dim"(%arg24) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %122 = "stablehlo.add"(%arg26, %121) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %123 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %124 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %125:9 = "stablehlo.while"(%124, %123, %120, %122, %arg24, %118, %arg23, %114, %115) ({
      ^bb0(%arg36: tensor<i32>, %arg37: tensor<i32>, %arg38: tensor<128x64xui32>, %arg39: tensor<128x64xui32>, %arg40: tensor<ui32>, %arg41: tensor<ui32>, %arg42: tensor<ui32>, %arg43: tensor<4xui32>, %arg44: tensor<4xui32>):
        %129 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
        %130 = "stablehlo.compare"(%arg36, %129) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%130) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg27: tensor<i32>, %arg28: tensor<i32>, %arg29: tensor<128x64xui32>, %arg30: tensor<128x64xui32>, %arg31: tensor<ui32>, %arg32: tensor<ui32>, %arg33: tensor<ui32>, %arg34: tensor<4xui32>, %arg35: tensor<4xui32>):
        %126:8 = "func.call"(%arg28, %arg29, %arg30, %arg31, %arg32, %arg33, %arg34, %arg35) <{callee = @closed_call_0}> : (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
        %127 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %128 = "stablehlo.add"(%arg27, %127) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%128, %126#0, %126#1, %126#2, %126#3, %126#4, %126#5, %126#6, %126#7) : (tensor<i32>, tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
      }) : (tensor<i32>, tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      "func.return"(%125#2, %125#3) : (tensor<128x64xui32>, tensor<128x64xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call_0", sym_visibility = "private"}> ({
    ^bb0(%arg15: tensor<i32>, %arg16: tensor<128x64xui32>, %arg17: tensor<128x64xui32>, %arg18: tensor<ui32>, %arg19: tensor<ui32>, %arg20: tensor<ui32>, %arg21: tensor<4xui32>, %arg22: tensor<4xui32>):
      %59 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %60 = "stablehlo.add"(%arg15, %59) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %61 = "stablehlo.slice"(%arg21) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %62 = "stablehlo.reshape"(%61) : (tensor<1xui32>) -> tensor<ui32>
      %63 = "stablehlo.add"(%arg16, %arg17) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %64 = "stablehlo.broadcast_in_dim"(%62) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %65 = "stablehlo.shift_left"(%arg17, %64) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %66 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %67 = "stablehlo.subtract"(%66, %62) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %68 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %69 = "stablehlo.shift_right_logical"(%arg17, %68) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %70 = "stablehlo.or"(%65, %69) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %71 = "stablehlo.xor"(%63, %70) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %72 = "stablehlo.slice"(%arg21) <{limit_indices = array<i64: 2>, start_indices = array<i64: 1>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %73 = "stablehlo.reshape"(%72) : (tensor<1xui32>) -> tensor<ui32>
      %74 = "stablehlo.add"(%63, %71) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %75 = "stablehlo.broadcast_in_dim"(%73) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %76 = "stablehlo.shift_left"(%71, %75) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %77 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %78 = "stablehlo.subtract"(%77, %73) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %79 = "stablehlo.broadcast_in_dim"(%78) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %80 = "stablehlo.shift_right_logical"(%71, %79) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %81 = "stablehlo.or"(%76, %80) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %82 = "stablehlo.xor"(%74, %81) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %83 = "stablehlo.slice"(%arg21) <{limit_indices = array<i64: 3>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %84 = "stablehlo.reshape"(%83) : (tensor<1xui32>) -> tensor<ui32>
      %85 = "stablehlo.add"(%74, %82) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %86 = "stablehlo.broadcast_in_dim"(%84) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %87 = "stablehlo.shift_left"(%82, %86) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %88 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %89 = "stablehlo.subtract"(%88, %84) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %90 = "stablehlo.broadcast_in_dim"(%89) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %91 = "stablehlo.shift_right_logical"(%82, %90) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %92 = "stablehlo.or"(%87, %91) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %93 = "stablehlo.xor"(%85, %92) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %94 = "stablehlo.slice"(%arg21) <{limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>}> : (tensor<4xui32>) -> tensor<1xui32>
      %95 = "stablehlo.reshape"(%94) : (tensor<1xui32>) -> tensor<ui32>
      %96 = "stablehlo.add"(%85, %93) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %97 = "stablehlo.broadcast_in_dim"(%95) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %98 = "stablehlo.shift_left"(%93, %97) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %99 = "stablehlo.constant"() <{value = dense<32> : tensor<ui32>}> : () -> tensor<ui32>
      %100 = "stablehlo.subtract"(%99, %95) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      %101 = "stablehlo.broadcast_in_dim"(%100) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %102 = "stablehlo.shift_right_logical"(%93, %101) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %103 = "stablehlo.or"(%98, %102) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %104 = "stablehlo.xor"(%96, %103) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %105 = "stablehlo.broadcast_in_dim"(%arg18) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %106 = "stablehlo.add"(%96, %105) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %107 = "stablehlo.broadcast_in_dim"(%arg19) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %108 = "stablehlo.add"(%104, %107) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      %109 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %110 = "stablehlo.add"(%arg15, %109) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %111 = "stablehlo.convert"(%110) : (tensor<i32>) -> tensor<ui32>
      %112 = "stablehlo.broadcast_in_dim"(%111) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<128x64xui32>
      %113 = "stablehlo.add"(%108, %112) : (tensor<128x64xui32>, tensor<128x64xui32>) -> tensor<128x64xui32>
      "func.return"(%60, %106, %113, %arg19, %arg20, %arg18, %arg22, %arg21) : (tensor<i32>, tensor<128x64xui32>, tensor<128x64xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<128x64xf32>) -> tensor<128xi32>, sym_name = "argmax", sym_visibility = "private"}> ({
    ^bb0(%arg10: tensor<128x64xf32>):
      %46 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<128x64xi32>
      %47 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %48 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %49:2 = "stablehlo.reduce"(%arg10, %46, %47, %48) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg11: tensor<f32>, %arg12: tensor<i32>, %arg13: tensor<f32>, %arg14: tensor<i32>):
        %50 = "stablehlo.compare"(%arg11, %arg13) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %51 = "stablehlo.compare"(%arg11, %arg11) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %52 = "stablehlo.or"(%50, %51) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        %53 = "stablehlo.compare"(%arg11, %arg13) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %54 = "stablehlo.compare"(%arg12, %arg14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        %55 = "stablehlo.and"(%53, %54) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        %56 = "stablehlo.or"(%52, %55) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        %57 = "stablehlo.select"(%52, %arg11, %arg13) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
        %58 = "stablehlo.select"(%56, %arg12, %arg14) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%57, %58) : (tensor<f32>, tensor<i32>) -> ()
      }) : (tensor<128x64xf32>, tensor<128x64xi32>, tensor<f32>, tensor<i32>) -> (tensor<128xf32>, tensor<128xi32>)
      "func.return"(%49#1) : (tensor<128xi32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<128x64xf32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "log_softmax", sym_visibility = "private"}> ({
    ^bb0(%arg5: tensor<128x64xf32>):
      %29 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %30 = "stablehlo.reduce"(%arg5, %29) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
        %45 = "stablehlo.maximum"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%45) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %31 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %33 = "stablehlo.maximum"(%32, %30) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %35 = "stablehlo.broadcast_in_dim"(%34) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %36 = "stablehlo.subtract"(%arg5, %35) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %37 = "stablehlo.exponential"(%36) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %38 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %39 = "stablehlo.reduce"(%37, %38) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
        %44 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%44) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %41 = "stablehlo.log"(%40) : (tensor<128x1xf32>) -> tensor<128x1xf32>
      %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %43 = "stablehlo.subtract"(%36, %42) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%43) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<128x64xf32>, tensor<128x1xi32>) -> tensor<128x1xf32>, res_attrs = [{}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
    ^bb0(%arg1: tensor<128x64xf32>, %arg2: tensor<128x1xi32>):
      %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %8 = "stablehlo.compare"(%arg2, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi1>
      %9 = "stablehlo.constant"() <{value = dense<64> : tensor<i32>}> : () -> tensor<i32>
      %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %11 = "stablehlo.add"(%arg2, %10) : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %12 = "stablehlo.select"(%8, %11, %arg2) : (tensor<128x1xi1>, tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %13 = "stablehlo.reshape"(%12) : (tensor<128x1xi32>) -> tensor<128x1x1xi32>
      %14 = "stablehlo.constant"() <{value = dense<63> : tensor<1xi32>}> : () -> tensor<1xi32>
      %15 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1x1xi32>
      %17 = "stablehlo.compare"(%13, %16) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %18 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
      %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<128x1x1xi32>
      %20 = "stablehlo.compare"(%13, %19) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %21 = "stablehlo.and"(%17, %20) : (tensor<128x1x1xi1>, tensor<128x1x1xi1>) -> tensor<128x1x1xi1>
      %22 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %23 = "stablehlo.reduce"(%21, %22) <{dimensions = array<i64: 2>}> ({
      ^bb0(%arg3: tensor<i1>, %arg4: tensor<i1>):
        %28 = "stablehlo.and"(%arg3, %arg4) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%28) : (tensor<i1>) -> ()
      }) : (tensor<128x1x1xi1>, tensor<i1>) -> tensor<128x1xi1>
      %24 = "stablehlo.gather"(%arg1, %13) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<128x64xf32>, tensor<128x1x1xi32>) -> tensor<128x1xf32>
      %25 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x1xf32>
      %27 = "stablehlo.select"(%23, %24, %26) : (tensor<128x1xi1>, tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      "func.return"(%27) : (tensor<128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<128xi32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "_one_hot", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<128xi32>):
      %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xi32>) -> tensor<128x1xi32>
      %1 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<1x64xi32>
      %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xi32>) -> tensor<128x64xi32>
      %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x64xi32>) -> tensor<128x64xi32>
      %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<128x64xi32>, tensor<128x64xi32>) -> tensor<128x64xi1>
      %5 = "stablehlo.convert"(%4) : (tensor<128x64xi1>) -> tensor<128x64xf32>
      "func.return"(%5) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
  }) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
  "builtin.module"() <{sym_name = "jit_rl_train"}> ({
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
    "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>, tensor<128xi32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>), res_attrs = [{jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = "main", sym_visibility = "public"}> ({
    ^bb0(%arg68: tensor<256x256xf32>, %arg69: tensor<256x64xf32>, %arg70: tensor<128x256xf32>, %arg71: tensor<128xi32>, %arg72: tensor<128xf32>, %arg73: tensor<128xf32>):
      %158 = "stablehlo.transpose"(%arg69) <{permutation = array<i64: 1, 0>}> : (tensor<256x64xf32>) -> tensor<64x256xf32>
      %159 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %160 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %161 = "stablehlo.broadcast_in_dim"(%160) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %162 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %163 = "stablehlo.broadcast_in_dim"(%162) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %164 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %165 = "stablehlo.broadcast_in_dim"(%164) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %166 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %167 = "stablehlo.broadcast_in_dim"(%166) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x64xf32>
      %168 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %169 = "stablehlo.broadcast_in_dim"(%168) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x1xf32>
      %170 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %171 = "stablehlo.broadcast_in_dim"(%170) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x1xf32>
      %172 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %173 = "stablehlo.broadcast_in_dim"(%172) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x64xf32>
      %174 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %175 = "stablehlo.broadcast_in_dim"(%174) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %176 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %177 = "stablehlo.broadcast_in_dim"(%176) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x256xf32>
      %178 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %179:15 = "stablehlo.while"(%arg68, %arg69, %158, %178, %159, %arg70, %161, %163, %165, %167, %169, %171, %173, %175, %177) ({
      ^bb0(%arg125: tensor<256x256xf32>, %arg126: tensor<256x64xf32>, %arg127: tensor<64x256xf32>, %arg128: tensor<i32>, %arg129: tensor<i32>, %arg130: tensor<128x256xf32>, %arg131: tensor<4x128x256xf32>, %arg132: tensor<4x128x256xf32>, %arg133: tensor<4x128x256xf32>, %arg134: tensor<4x128x64xf32>, %arg135: tensor<4x128x1xf32>, %arg136: tensor<4x128x1xf32>, %arg137: tensor<4x128x64xf32>, %arg138: tensor<4x128x256xf32>, %arg139: tensor<4x128x256xf32>):
        %273 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %274 = "stablehlo.compare"(%arg128, %273) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%274) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg110: tensor<256x256xf32>, %arg111: tensor<256x64xf32>, %arg112: tensor<64x256xf32>, %arg113: tensor<i32>, %arg114: tensor<i32>, %arg115: tensor<128x256xf32>, %arg116: tensor<4x128x256xf32>, %arg117: tensor<4x128x256xf32>, %arg118: tensor<4x128x256xf32>, %arg119: tensor<4x128x64xf32>, %arg120: tensor<4x128x1xf32>, %arg121: tensor<4x128x1xf32>, %arg122: tensor<4x128x64xf32>, %arg123: tensor<4x128x256xf32>, %arg124: tensor<4x128x256xf32>):
        %261:11 = "func.call"(%arg110, %arg111, %arg112, %arg114, %arg115) <{callee = @closed_call}> : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>)
        %262 = "func.call"(%arg116, %261#2, %arg113) <{callee = @dynamic_update_index_in_dim}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %263 = "func.call"(%arg117, %261#3, %arg113) <{callee = @dynamic_update_index_in_dim_0}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %264 = "func.call"(%arg118, %261#4, %arg113) <{callee = @dynamic_update_index_in_dim_0}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %265 = "func.call"(%arg119, %261#5, %arg113) <{callee = @dynamic_update_index_in_dim_1}> : (tensor<4x128x64xf32>, tensor<128x64xf32>, tensor<i32>) -> tensor<4x128x64xf32>
        %266 = "func.call"(%arg120, %261#6, %arg113) <{callee = @dynamic_update_index_in_dim_2}> : (tensor<4x128x1xf32>, tensor<128x1xf32>, tensor<i32>) -> tensor<4x128x1xf32>
        %267 = "func.call"(%arg121, %261#7, %arg113) <{callee = @dynamic_update_index_in_dim_2}> : (tensor<4x128x1xf32>, tensor<128x1xf32>, tensor<i32>) -> tensor<4x128x1xf32>
        %268 = "func.call"(%arg122, %261#8, %arg113) <{callee = @dynamic_update_index_in_dim_1}> : (tensor<4x128x64xf32>, tensor<128x64xf32>, tensor<i32>) -> tensor<4x128x64xf32>
        %269 = "func.call"(%arg123, %261#9, %arg113) <{callee = @dynamic_update_index_in_dim_0}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %270 = "func.call"(%arg124, %261#10, %arg113) <{callee = @dynamic_update_index_in_dim_0}> : (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>
        %271 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %272 = "stablehlo.add"(%arg113, %271) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg110, %arg111, %arg112, %272, %261#0, %261#1, %262, %263, %264, %265, %266, %267, %268, %269, %270) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>) -> ()
      }) : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<i32>, tensor<128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>)
      %180 = "stablehlo.dot_general"(%179#5, %arg68) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %181 = "stablehlo.tanh"(%180) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %182 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %183 = "stablehlo.broadcast_in_dim"(%182) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %184 = "stablehlo.subtract"(%183, %181) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %185 = "stablehlo.dot_general"(%181, %arg69) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %186:3 = "func.call"(%185) <{callee = @log_softmax}> : (tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x1xf32>)
      %187 = "stablehlo.broadcast_in_dim"(%arg71) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xi32>) -> tensor<128x1xi32>
      %188:2 = "func.call"(%186#0, %187) <{callee = @take_along_axis}> : (tensor<128x64xf32>, tensor<128x1xi32>) -> (tensor<128x1xf32>, tensor<128x1x1xi32>)
      %189 = "stablehlo.reshape"(%188#0) : (tensor<128x1xf32>) -> tensor<128xf32>
      %190 = "stablehlo.subtract"(%189, %arg72) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %191 = "stablehlo.exponential"(%190) : (tensor<128xf32>) -> tensor<128xf32>
      %192 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %193 = "stablehlo.reduce"(%arg73, %192) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg108: tensor<f32>, %arg109: tensor<f32>):
        %260 = "stablehlo.add"(%arg108, %arg109) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%260) : (tensor<f32>) -> ()
      }) : (tensor<128xf32>, tensor<f32>) -> tensor<f32>
      %194 = "stablehlo.constant"() <{value = dense<1.280000e+02> : tensor<f32>}> : () -> tensor<f32>
      %195 = "stablehlo.divide"(%193, %194) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %196 = "stablehlo.broadcast_in_dim"(%195) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %197 = "stablehlo.subtract"(%arg73, %196) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %198 = "stablehlo.multiply"(%197, %191) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %199 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %200 = "stablehlo.reduce"(%198, %199) <{dimensions = array<i64: 0>}> ({
      ^bb0(%arg106: tensor<f32>, %arg107: tensor<f32>):
        %259 = "stablehlo.add"(%arg106, %arg107) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%259) : (tensor<f32>) -> ()
      }) : (tensor<128xf32>, tensor<f32>) -> tensor<f32>
      %201 = "stablehlo.constant"() <{value = dense<1.280000e+02> : tensor<f32>}> : () -> tensor<f32>
      %202 = "stablehlo.divide"(%200, %201) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %203 = "stablehlo.negate"(%202) : (tensor<f32>) -> tensor<f32>
      %204 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %205 = "stablehlo.broadcast_in_dim"(%204) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %206 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %207 = "stablehlo.negate"(%206) : (tensor<f32>) -> tensor<f32>
      %208 = "stablehlo.constant"() <{value = dense<1.280000e+02> : tensor<f32>}> : () -> tensor<f32>
      %209 = "stablehlo.divide"(%207, %208) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %210 = "stablehlo.broadcast_in_dim"(%209) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %211 = "stablehlo.multiply"(%197, %210) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %212 = "stablehlo.multiply"(%211, %191) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %213 = "stablehlo.broadcast_in_dim"(%212) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %214 = "func.call"(%188#1, %213) <{callee = @take_along_axis_3}> : (tensor<128x1x1xi32>, tensor<128x1xf32>) -> tensor<128x64xf32>
      %215 = "func.call"(%186#1, %186#2, %214) <{callee = @log_softmax_4}> : (tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %216 = "stablehlo.dot_general"(%215, %181) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
      %217 = "stablehlo.transpose"(%216) <{permutation = array<i64: 1, 0>}> : (tensor<64x256xf32>) -> tensor<256x64xf32>
      %218 = "stablehlo.dot_general"(%215, %arg69) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<256x64xf32>) -> tensor<128x256xf32>
      %219 = "stablehlo.multiply"(%218, %184) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %220 = "stablehlo.multiply"(%219, %181) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %221 = "stablehlo.add"(%219, %220) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %222 = "stablehlo.dot_general"(%221, %179#5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<256x256xf32>
      %223 = "stablehlo.transpose"(%222) <{permutation = array<i64: 1, 0>}> : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %224 = "stablehlo.dot_general"(%221, %arg68) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %225 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %226 = "stablehlo.broadcast_in_dim"(%225) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
      %227 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %228 = "stablehlo.broadcast_in_dim"(%227) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x64xf32>
      %229 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %230:16 = "stablehlo.while"(%179#6, %179#7, %179#8, %179#9, %179#10, %179#11, %179#12, %179#13, %179#14, %arg68, %arg69, %158, %229, %226, %228, %224) ({
      ^bb0(%arg90: tensor<4x128x256xf32>, %arg91: tensor<4x128x256xf32>, %arg92: tensor<4x128x256xf32>, %arg93: tensor<4x128x64xf32>, %arg94: tensor<4x128x1xf32>, %arg95: tensor<4x128x1xf32>, %arg96: tensor<4x128x64xf32>, %arg97: tensor<4x128x256xf32>, %arg98: tensor<4x128x256xf32>, %arg99: tensor<256x256xf32>, %arg100: tensor<256x64xf32>, %arg101: tensor<64x256xf32>, %arg102: tensor<i32>, %arg103: tensor<256x256xf32>, %arg104: tensor<256x64xf32>, %arg105: tensor<128x256xf32>):
        %257 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %258 = "stablehlo.compare"(%arg102, %257) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%258) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg74: tensor<4x128x256xf32>, %arg75: tensor<4x128x256xf32>, %arg76: tensor<4x128x256xf32>, %arg77: tensor<4x128x64xf32>, %arg78: tensor<4x128x1xf32>, %arg79: tensor<4x128x1xf32>, %arg80: tensor<4x128x64xf32>, %arg81: tensor<4x128x256xf32>, %arg82: tensor<4x128x256xf32>, %arg83: tensor<256x256xf32>, %arg84: tensor<256x64xf32>, %arg85: tensor<64x256xf32>, %arg86: tensor<i32>, %arg87: tensor<256x256xf32>, %arg88: tensor<256x64xf32>, %arg89: tensor<128x256xf32>):
        %241 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
        %242 = "stablehlo.subtract"(%241, %arg86) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %243 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %244 = "stablehlo.subtract"(%242, %243) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %245 = "func.call"(%arg74, %244) <{callee = @dynamic_index_in_dim}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %246 = "func.call"(%arg75, %244) <{callee = @dynamic_index_in_dim_5}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %247 = "func.call"(%arg76, %244) <{callee = @dynamic_index_in_dim_5}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %248 = "func.call"(%arg77, %244) <{callee = @dynamic_index_in_dim_6}> : (tensor<4x128x64xf32>, tensor<i32>) -> tensor<128x64xf32>
        %249 = "func.call"(%arg78, %244) <{callee = @dynamic_index_in_dim_7}> : (tensor<4x128x1xf32>, tensor<i32>) -> tensor<128x1xf32>
        %250 = "func.call"(%arg79, %244) <{callee = @dynamic_index_in_dim_7}> : (tensor<4x128x1xf32>, tensor<i32>) -> tensor<128x1xf32>
        %251 = "func.call"(%arg80, %244) <{callee = @dynamic_index_in_dim_6}> : (tensor<4x128x64xf32>, tensor<i32>) -> tensor<128x64xf32>
        %252 = "func.call"(%arg81, %244) <{callee = @dynamic_index_in_dim_5}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %253 = "func.call"(%arg82, %244) <{callee = @dynamic_index_in_dim_5}> : (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>
        %254:3 = "func.call"(%arg83, %arg84, %arg85, %arg87, %arg88, %arg89, %245, %246, %247, %248, %249, %250, %251, %252, %253) <{callee = @closed_call_8}> : (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>)
        %255 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
        %256 = "stablehlo.add"(%arg86, %255) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%arg74, %arg75, %arg76, %arg77, %arg78, %arg79, %arg80, %arg81, %arg82, %arg83, %arg84, %arg85, %256, %254#0, %254#1, %254#2) : (tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>) -> ()
      }) : (tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>) -> (tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<4x128x64xf32>, tensor<4x128x1xf32>, tensor<4x128x1xf32>, tensor<4x128x64xf32>, tensor<4x128x256xf32>, tensor<4x128x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>)
      %231 = "stablehlo.add"(%223, %230#13) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %232 = "stablehlo.add"(%217, %230#14) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %233 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %234 = "stablehlo.broadcast_in_dim"(%233) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
      %235 = "stablehlo.multiply"(%234, %231) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %236 = "stablehlo.subtract"(%arg68, %235) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %237 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %238 = "stablehlo.broadcast_in_dim"(%237) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x64xf32>
      %239 = "stablehlo.multiply"(%238, %232) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %240 = "stablehlo.subtract"(%arg69, %239) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      "func.return"(%236, %240) : (tensor<256x256xf32>, tensor<256x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<i32>, tensor<128x256xf32>) -> (tensor<i32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>), res_attrs = [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
    ^bb0(%arg59: tensor<256x256xf32>, %arg60: tensor<256x64xf32>, %arg61: tensor<64x256xf32>, %arg62: tensor<i32>, %arg63: tensor<128x256xf32>):
      %124 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %125 = "stablehlo.add"(%arg62, %124) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %126 = "stablehlo.dot_general"(%arg63, %arg59) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
      %127 = "stablehlo.tanh"(%126) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %128 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %129 = "stablehlo.broadcast_in_dim"(%128) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %130 = "stablehlo.subtract"(%129, %127) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %131 = "stablehlo.dot_general"(%127, %arg60) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      %132 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %133 = "stablehlo.reduce"(%131, %132) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg66: tensor<f32>, %arg67: tensor<f32>):
        %157 = "stablehlo.maximum"(%arg66, %arg67) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%157) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %134 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %135 = "stablehlo.broadcast_in_dim"(%134) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %136 = "stablehlo.maximum"(%135, %133) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %137 = "stablehlo.broadcast_in_dim"(%136) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %138 = "stablehlo.broadcast_in_dim"(%137) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %139 = "stablehlo.subtract"(%131, %138) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %140 = "stablehlo.exponential"(%139) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %141 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %142 = "stablehlo.reduce"(%140, %141) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg64: tensor<f32>, %arg65: tensor<f32>):
        %156 = "stablehlo.add"(%arg64, %arg65) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%156) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %143 = "stablehlo.broadcast_in_dim"(%142) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %144 = "stablehlo.broadcast_in_dim"(%143) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %145 = "stablehlo.divide"(%140, %144) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %146 = "stablehlo.multiply"(%143, %143) : (tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      %147 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %148 = "stablehlo.broadcast_in_dim"(%147) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x1xf32>
      %149 = "stablehlo.divide"(%148, %146) : (tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      %150 = "stablehlo.dot_general"(%145, %arg61) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
      %151 = "stablehlo.add"(%arg63, %150) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      %152 = "stablehlo.tanh"(%151) : (tensor<128x256xf32>) -> tensor<128x256xf32>
      %153 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %154 = "stablehlo.broadcast_in_dim"(%153) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x256xf32>
      %155 = "stablehlo.subtract"(%154, %152) : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%125, %152, %arg63, %127, %130, %140, %143, %149, %145, %152, %155) : (tensor<i32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
    ^bb0(%arg56: tensor<4x128x256xf32>, %arg57: tensor<128x256xf32>, %arg58: tensor<i32>):
      %120 = "stablehlo.broadcast_in_dim"(%arg57) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x256xf32>) -> tensor<1x128x256xf32>
      %121 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %122 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %123 = "stablehlo.dynamic_update_slice"(%arg56, %120, %arg58, %121, %122) : (tensor<4x128x256xf32>, tensor<1x128x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x256xf32>
      "func.return"(%123) : (tensor<4x128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x256xf32>, tensor<128x256xf32>, tensor<i32>) -> tensor<4x128x256xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim_0", sym_visibility = "private"}> ({
    ^bb0(%arg53: tensor<4x128x256xf32>, %arg54: tensor<128x256xf32>, %arg55: tensor<i32>):
      %116 = "stablehlo.broadcast_in_dim"(%arg54) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x256xf32>) -> tensor<1x128x256xf32>
      %117 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %118 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %119 = "stablehlo.dynamic_update_slice"(%arg53, %116, %arg55, %117, %118) : (tensor<4x128x256xf32>, tensor<1x128x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x256xf32>
      "func.return"(%119) : (tensor<4x128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x64xf32>, tensor<128x64xf32>, tensor<i32>) -> tensor<4x128x64xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim_1", sym_visibility = "private"}> ({
    ^bb0(%arg50: tensor<4x128x64xf32>, %arg51: tensor<128x64xf32>, %arg52: tensor<i32>):
      %112 = "stablehlo.broadcast_in_dim"(%arg51) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x64xf32>) -> tensor<1x128x64xf32>
      %113 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %114 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %115 = "stablehlo.dynamic_update_slice"(%arg50, %112, %arg52, %113, %114) : (tensor<4x128x64xf32>, tensor<1x128x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x64xf32>
      "func.return"(%115) : (tensor<4x128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x128x1xf32>, tensor<128x1xf32>, tensor<i32>) -> tensor<4x128x1xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim_2", sym_visibility = "private"}> ({
    ^bb0(%arg47: tensor<4x128x1xf32>, %arg48: tensor<128x1xf32>, %arg49: tensor<i32>):
      %108 = "stablehlo.broadcast_in_dim"(%arg48) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x1xf32>) -> tensor<1x128x1xf32>
      %109 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %110 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %111 = "stablehlo.dynamic_update_slice"(%arg47, %108, %arg49, %109, %110) : (tensor<4x128x1xf32>, tensor<1x128x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x1xf32>
      "func.return"(%111) : (tensor<4x128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}], function_type = (tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x1xf32>), res_attrs = [{}, {}, {}], sym_name = "log_softmax", sym_visibility = "private"}> ({
    ^bb0(%arg42: tensor<128x64xf32>):
      %91 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %92 = "stablehlo.reduce"(%arg42, %91) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg45: tensor<f32>, %arg46: tensor<f32>):
        %107 = "stablehlo.maximum"(%arg45, %arg46) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%107) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %93 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %94 = "stablehlo.broadcast_in_dim"(%93) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128xf32>
      %95 = "stablehlo.maximum"(%94, %92) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      %96 = "stablehlo.broadcast_in_dim"(%95) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %97 = "stablehlo.broadcast_in_dim"(%96) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %98 = "stablehlo.subtract"(%arg42, %97) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %99 = "stablehlo.exponential"(%98) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %100 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %101 = "stablehlo.reduce"(%99, %100) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg43: tensor<f32>, %arg44: tensor<f32>):
        %106 = "stablehlo.add"(%arg43, %arg44) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%106) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %102 = "stablehlo.broadcast_in_dim"(%101) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x1xf32>
      %103 = "stablehlo.log"(%102) : (tensor<128x1xf32>) -> tensor<128x1xf32>
      %104 = "stablehlo.broadcast_in_dim"(%103) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<128x1xf32>) -> tensor<128x64xf32>
      %105 = "stablehlo.subtract"(%98, %104) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%105, %99, %102) : (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<128x64xf32>, tensor<128x1xi32>) -> (tensor<128x1xf32>, tensor<128x1x1xi32>), res_attrs = [{}, {}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
    ^bb0(%arg38: tensor<128x64xf32>, %arg39: tensor<128x1xi32>):
      %68 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %69 = "stablehlo.broadcast_in_dim"(%68) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %70 = "stablehlo.compare"(%arg39, %69) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi1>
      %71 = "stablehlo.constant"() <{value = dense<64> : tensor<i32>}> : () -> tensor<i32>
      %72 = "stablehlo.broadcast_in_dim"(%71) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1xi32>
      %73 = "stablehlo.add"(%arg39, %72) : (tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %74 = "stablehlo.select"(%70, %73, %arg39) : (tensor<128x1xi1>, tensor<128x1xi32>, tensor<128x1xi32>) -> tensor<128x1xi32>
      %75 = "stablehlo.reshape"(%74) : (tensor<128x1xi32>) -> tensor<128x1x1xi32>
      %76 = "stablehlo.constant"() <{value = dense<63> : tensor<1xi32>}> : () -> tensor<1xi32>
      %77 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %78 = "stablehlo.broadcast_in_dim"(%77) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<128x1x1xi32>
      %79 = "stablehlo.compare"(%75, %78) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %80 = "stablehlo.broadcast_in_dim"(%76) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
      %81 = "stablehlo.broadcast_in_dim"(%80) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<128x1x1xi32>
      %82 = "stablehlo.compare"(%75, %81) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<128x1x1xi32>, tensor<128x1x1xi32>) -> tensor<128x1x1xi1>
      %83 = "stablehlo.and"(%79, %82) : (tensor<128x1x1xi1>, tensor<128x1x1xi1>) -> tensor<128x1x1xi1>
      %84 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
      %85 = "stablehlo.reduce"(%83, %84) <{dimensions = array<i64: 2>}> ({
      ^bb0(%arg40: tensor<i1>, %arg41: tensor<i1>):
        %90 = "stablehlo.and"(%arg40, %arg41) : (tensor<i1>, tensor<i1>) -> tensor<i1>
        "stablehlo.return"(%90) : (tensor<i1>) -> ()
      }) : (tensor<128x1x1xi1>, tensor<i1>) -> tensor<128x1xi1>
      %86 = "stablehlo.gather"(%arg38, %75) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<128x64xf32>, tensor<128x1x1xi32>) -> tensor<128x1xf32>
      %87 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %88 = "stablehlo.broadcast_in_dim"(%87) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x1xf32>
      %89 = "stablehlo.select"(%85, %86, %88) : (tensor<128x1xi1>, tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      "func.return"(%89, %75) : (tensor<128x1xf32>, tensor<128x1x1xi32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<128x1x1xi32>, tensor<128x1xf32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "take_along_axis_3", sym_visibility = "private"}> ({
    ^bb0(%arg34: tensor<128x1x1xi32>, %arg35: tensor<128x1xf32>):
      %64 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %65 = "stablehlo.broadcast_in_dim"(%64) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
      %66 = "stablehlo.scatter"(%65, %arg34, %arg35) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
      ^bb0(%arg36: tensor<f32>, %arg37: tensor<f32>):
        %67 = "stablehlo.add"(%arg36, %arg37) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%67) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<128x1x1xi32>, tensor<128x1xf32>) -> tensor<128x64xf32>
      "func.return"(%66) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "log_softmax_4", sym_visibility = "private"}> ({
    ^bb0(%arg27: tensor<128x64xf32>, %arg28: tensor<128x1xf32>, %arg29: tensor<128x64xf32>):
      %52 = "stablehlo.negate"(%arg29) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %53 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %54 = "stablehlo.reduce"(%52, %53) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg32: tensor<f32>, %arg33: tensor<f32>):
        %63 = "stablehlo.add"(%arg32, %arg33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%63) : (tensor<f32>) -> ()
      }) : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>
      %55 = "stablehlo.reshape"(%54) : (tensor<128xf32>) -> tensor<128x1xf32>
      %56 = "stablehlo.divide"(%55, %arg28) : (tensor<128x1xf32>, tensor<128x1xf32>) -> tensor<128x1xf32>
      %57 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %58 = "stablehlo.reduce"(%56, %57) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
        %62 = "stablehlo.add"(%arg30, %arg31) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%62) : (tensor<f32>) -> ()
      }) : (tensor<128x1xf32>, tensor<f32>) -> tensor<128xf32>
      %59 = "stablehlo.broadcast_in_dim"(%58) <{broadcast_dimensions = array<i64: 0>}> : (tensor<128xf32>) -> tensor<128x64xf32>
      %60 = "stablehlo.multiply"(%59, %arg27) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %61 = "stablehlo.add"(%arg29, %60) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%61) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
    ^bb0(%arg25: tensor<4x128x256xf32>, %arg26: tensor<i32>):
      %48 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %49 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %50 = "stablehlo.dynamic_slice"(%arg25, %arg26, %48, %49) <{slice_sizes = array<i64: 1, 128, 256>}> : (tensor<4x128x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x256xf32>
      %51 = "stablehlo.reshape"(%50) : (tensor<1x128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%51) : (tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x256xf32>, tensor<i32>) -> tensor<128x256xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim_5", sym_visibility = "private"}> ({
    ^bb0(%arg23: tensor<4x128x256xf32>, %arg24: tensor<i32>):
      %44 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %45 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %46 = "stablehlo.dynamic_slice"(%arg23, %arg24, %44, %45) <{slice_sizes = array<i64: 1, 128, 256>}> : (tensor<4x128x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x256xf32>
      %47 = "stablehlo.reshape"(%46) : (tensor<1x128x256xf32>) -> tensor<128x256xf32>
      "func.return"(%47) : (tensor<128x256xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x64xf32>, tensor<i32>) -> tensor<128x64xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim_6", sym_visibility = "private"}> ({
    ^bb0(%arg21: tensor<4x128x64xf32>, %arg22: tensor<i32>):
      %40 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %41 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %42 = "stablehlo.dynamic_slice"(%arg21, %arg22, %40, %41) <{slice_sizes = array<i64: 1, 128, 64>}> : (tensor<4x128x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x64xf32>
      %43 = "stablehlo.reshape"(%42) : (tensor<1x128x64xf32>) -> tensor<128x64xf32>
      "func.return"(%43) : (tensor<128x64xf32>) -> ()
    }) : () -> ()
    "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x1xf32>, tensor<i32>) -> tensor<128x1xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim_7", sym_visibility = "private"}> ({
    ^bb0(%arg19: tensor<4x128x1xf32>, %arg20: tensor<i32>):
      %36 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %37 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %38 = "stablehlo.dynamic_slice"(%arg19, %arg20, %36, %37) <{slice_sizes = array<i64: 1, 128, 1>}> : (tensor<4x128x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x1xf32>
      %39 = "stablehlo.reshape"(%38) : (tensor<1x128x1xf32>) -> tensor<128x1xf32>
      "func.return"(%39) : (tensor<128x1xf32>) -> ()
    }) : () -> ()
    "func.func"() <{function_type = (tensor<256x256xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x64xf32>, tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x64xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<128x256xf32>), res_attrs = [{}, {}, {}], sym_name = "closed_call_8", sym_visibility = "private"}> ({
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
  func.func @main(%arg0: !pw.array<256x256xf32>, %arg1: !pw.array<256x64xf32>, %arg2: !pw.array<320x1024xf32>, %arg3: !pw.array<1024x1024xf32>, %arg4: !pw.array<1024xf32>, %arg5: !pw.array<128x256xf32>, %arg6: !pw.array<128x256xf32>, %arg7: !pw.array<128x256xf32>, %arg8: !pw.array<128x256xf32>, %arg9: !pw.array<128x256xf32>, %arg10: !pw.array<128x256xf32>, %arg11: !pw.array<128x256xf32>, %arg12: !pw.array<ui32>, %arg13: !pw.array<ui32>, %arg14: !pw.array<ui32>, %arg15: !pw.array<ui32>, %arg16: !pw.array<ui32>, %arg17: !pw.array<ui32>, %arg18: !pw.array<ui32>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) {
    %0:3 = pw.call @jit_rl_sample(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg12) on @sampler : (!pw.array<256x256xf32>, !pw.array<256x64xf32>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %1:3 = pw.call @jit_rl_sample(%arg0, %arg1, %arg2, %arg3, %arg4, %arg6, %arg13) on @sampler : (!pw.array<256x256xf32>, !pw.array<256x64xf32>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %2:2 = pw.call @jit_rl_train(%arg0, %arg1, %arg5, %0#0, %0#1, %0#2) on @trainer : (!pw.array<256x256xf32>, !pw.array<256x64xf32>, !pw.array<128x256xf32>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %3:3 = pw.call @jit_rl_sample(%2#0, %2#1, %arg2, %arg3, %arg4, %arg7, %arg14) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %4:2 = pw.call @jit_rl_train(%2#0, %2#1, %arg6, %1#0, %1#1, %1#2) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %5:3 = pw.call @jit_rl_sample(%4#0, %4#1, %arg2, %arg3, %arg4, %arg8, %arg15) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %6:2 = pw.call @jit_rl_train(%4#0, %4#1, %arg7, %3#0, %3#1, %3#2) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %7:3 = pw.call @jit_rl_sample(%6#0, %6#1, %arg2, %arg3, %arg4, %arg9, %arg16) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %8:2 = pw.call @jit_rl_train(%6#0, %6#1, %arg8, %5#0, %5#1, %5#2) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %9:3 = pw.call @jit_rl_sample(%8#0, %8#1, %arg2, %arg3, %arg4, %arg10, %arg17) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %10:2 = pw.call @jit_rl_train(%8#0, %8#1, %arg9, %7#0, %7#1, %7#2) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    %11:3 = pw.call @jit_rl_sample(%10#0, %10#1, %arg2, %arg3, %arg4, %arg11, %arg18) on @sampler : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<320x1024xf32>, !pw.array<1024x1024xf32>, !pw.array<1024xf32>, !pw.array<128x256xf32>, !pw.array<ui32>) -> (!pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>)
    %12:2 = pw.call @jit_rl_train(%10#0, %10#1, %arg10, %9#0, %9#1, %9#2) on @trainer : (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128x256xf32>, !pw.array<128xi32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>) -> (!pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>)
    return %12#0, %12#1, %0#2, %1#2, %3#2, %5#2, %7#2, %9#2, %11#2 : !pw.array<256x256xf32, @trainer>, !pw.array<256x64xf32, @trainer>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>, !pw.array<128xf32, @sampler>
  }
}
