// Tests, on the default island of 8 devices: meshes get distinct devices;
// a transfer of rows-split to columns-split arrays becomes two gathers; a
// reshard from replicated to split on the same devices is local
// (same_device copies); a replicated source is read from both replicas.
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2] {kind = "cpu"}
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
      return %x : tensor<4x8xf32>
    }
  }
  func.func @main(%r: !pw.array<4x8xf32, @a, [{"x"}, {}]>, %f: !pw.array<4x8xf32, @a, [{}, {}]>) -> (!pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>) {
    %0 = pw.transfer %r : !pw.array<4x8xf32, @a, [{"x"}, {}]> -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    %1 = pw.reshard %f : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @a, [{"x"}, {}]>
    %2 = pw.transfer %f : !pw.array<4x8xf32, @a, [{}, {}]> -> !pw.array<4x8xf32, @b, [{"x"}, {}]>
    %3 = pw.call @f(%0) on @b : (!pw.array<4x8xf32, @b, [{}, {"x"}]>) -> !pw.array<4x8xf32, @b, [{}, {"x"}]>
    return %3, %1, %2 : !pw.array<4x8xf32, @b, [{}, {"x"}]>, !pw.array<4x8xf32, @a, [{"x"}, {}]>, !pw.array<4x8xf32, @b, [{"x"}, {}]>
  }
}
