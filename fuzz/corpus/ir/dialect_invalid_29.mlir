// Tests that in_shardings fit the call's mesh.
module {
  pw.mesh @m ["x"=2]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      return %a : tensor<3xf32>
    }
  }
  func.func @main(%x: !pw.array<3xf32>) {
    // expected-error@+1 {{in_shardings #0 [{"x"}] does not fit mesh @m: dimension 0 of size 3 is not divisible by 2}}
    %0 = pw.call @id(%x) on @m {in_shardings = [[["x"]]]} : (!pw.array<3xf32>) -> !pw.array<3xf32, @m>
    return
  }
}
