// RUN: pw-opt %s --split-input-file --verify-diagnostics
// Every rule of the program verifier, one failing case each.

// Tests that only meshes, computations and @main live at the top level.
module {
  // expected-error@+1 {{'foo.bar' cannot appear at the top level of a pw program}}
  "foo.bar"() : () -> ()
  func.func @main() {
    return
  }
}

// -----

// Tests that a program needs func.func @main.
// expected-error@+1 {{not a pw program: no func.func @main}}
module {
  pw.mesh @m ["x"=2]
}

// -----

// Tests that a program has exactly one function.
module {
  func.func @main() {
    return
  }
  // expected-error@+1 {{a pw program has exactly one function, func.func @main}}
  func.func @other() {
    return
  }
}

// -----

// Tests that mesh axis names are distinct.
module {
  // expected-error@+1 {{mesh @m repeats or has an empty axis name "x"}}
  pw.mesh @m ["x"=2, "x"=2]
  func.func @main() {
    return
  }
}

// -----

// Tests that mesh axis sizes are positive.
module {
  // expected-error@+1 {{axis "x" of mesh @m has size 0; sizes must be >= 1}}
  pw.mesh @m ["x"=0]
  func.func @main() {
    return
  }
}

// -----

// Tests that axis names and sizes come in pairs (generic form).
module {
  // expected-error@+1 {{mesh @m has 2 axis names but 1 sizes}}
  "pw.mesh"() {sym_name = "m", axis_names = ["x", "y"], axis_sizes = array<i64: 2>} : () -> ()
  func.func @main() {
    return
  }
}

// -----

// Tests that a device kind is not empty.
module {
  // expected-error@+1 {{mesh @m has an empty device kind}}
  pw.mesh @m ["x"=2] {kind = ""}
  func.func @main() {
    return
  }
}

// -----

// Tests that same_island_as names an existing mesh.
module {
  // expected-error@+1 {{mesh @m must share an island with unknown mesh @nowhere}}
  pw.mesh @m ["x"=2] {same_island_as = @nowhere}
  func.func @main() {
    return
  }
}

// -----

// Tests that a mesh is not constrained to its own island.
module {
  // expected-error@+1 {{mesh @m cannot be on the same island as itself}}
  pw.mesh @m ["x"=2] {same_island_as = @m}
  func.func @main() {
    return
  }
}

// -----

// Tests that a physical mesh lists one device per position.
module {
  // expected-error@+1 {{mesh @m has 3 devices but its axes need 2}}
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 1, 2>}
  func.func @main() {
    return
  }
}

// -----

// Tests that a physical mesh lists each device once.
module {
  // expected-error@+1 {{mesh @m lists a device twice or a negative device id}}
  pw.mesh @m ["x"=2] {devices = array<i64: 1, 1>}
  func.func @main() {
    return
  }
}

// -----

// Tests that two symbols cannot share a name (MLIR's symbol table).
module {
  // expected-note@+1 {{see existing symbol definition here}}
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{redefinition of symbol named 'm'}}
  pw.mesh @m ["x"=4]
  func.func @main() {
    return
  }
}

// -----

// Tests that arrays are placed on declared meshes.
module {
  // expected-error@+1 {{program input is placed on unknown mesh @ghost}}
  func.func @main(%x: !pw.array<4xf32, @ghost>) {
    return
  }
}

// -----

// Tests that a sharding names axes of its mesh.
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{axis "y" is not an axis of mesh ["x"=2]}}
  func.func @main(%x: !pw.array<4xf32, @m, [{"y"}]>) {
    return
  }
}

// -----

// Tests that an axis shards one dimension at most.
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{axis "x" shards more than one dimension}}
  func.func @main(%x: !pw.array<4x4xf32, @m, [{"x"}, {"x"}]>) {
    return
  }
}

// -----

// Tests that sharded dimensions divide by their axes' sizes.
module {
  pw.mesh @m ["x"=2, "y"=3]
  // expected-error@+1 {{dimension 0 of size 4 is not divisible by 6 (axes ["x", "y"])}}
  func.func @main(%x: !pw.array<4xf32, @m, [{"x", "y"}]>) {
    return
  }
}

// -----

// Tests that a sharding has one entry per dimension (the type's verifier).
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{sharding has 1 dimensions but the array has rank 2}}
  func.func @main(%x: !pw.array<4x4xf32, @m, [{"x"}]>) {
    return
  }
}

// -----

// Tests that element types are ones pw arrays can hold.
module {
  // expected-error@+1 {{unsupported element type i3}}
  func.func @main(%x: !pw.array<4xi3>) {
    return
  }
}

// -----

// Tests that a call's callee exists.
module {
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{call to unknown computation @nothing}}
    %0 = pw.call @nothing(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}

// -----

// Tests that a call passes as many arguments as the computation takes.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{computation @id takes 1 arguments but the call has 2}}
    %0 = pw.call @id(%x, %x) : (!pw.array<4xf32>, !pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}

// -----

// Tests that argument shapes match the computation's signature.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<8xf32>) {
    // expected-error@+1 {{argument #0 is tensor<8xf32> but computation @id expects tensor<4xf32>}}
    %0 = pw.call @id(%x) : (!pw.array<8xf32>) -> !pw.array<4xf32>
    return
  }
}

// -----

// Tests that argument dtypes match the computation's signature.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xbf16>) {
    // expected-error@+1 {{argument #0 is tensor<4xbf16> but computation @id expects tensor<4xf32>}}
    %0 = pw.call @id(%x) : (!pw.array<4xbf16>) -> !pw.array<4xf32>
    return
  }
}

// -----

// Tests that result types match the computation's signature.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is tensor<4xi32> but computation @id expects tensor<4xf32>}}
    %0 = pw.call @id(%x) : (!pw.array<4xf32>) -> !pw.array<4xi32>
    return
  }
}

// -----

// Tests that a placed call's results live on its mesh.
module {
  pw.mesh @m []
  pw.mesh @n []
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is on @n but the call is on @m}}
    %0 = pw.call @id(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @n>
    return
  }
}

// -----

// Tests that an unplaced call has unplaced results.
module {
  pw.mesh @m []
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is on @m but the call is unplaced}}
    %0 = pw.call @id(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}

// -----

// Tests that a call's mesh exists.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{result #0 is placed on unknown mesh @ghost}}
    %0 = pw.call @id(%x) on @ghost : (!pw.array<4xf32>) -> !pw.array<4xf32, @ghost>
    return
  }
}

// -----

// Tests that a call's mesh has as many devices as the computation has
// partitions.
module {
  pw.mesh @m ["x"=4]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{computation @id is compiled for 2 partition(s) but mesh @m has 4 device(s)}}
    %0 = pw.call @id(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}

// -----

// Tests that a call's mesh has the axes its computation was lowered for.
module {
  pw.mesh @m ["y"=2]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{computation @id was lowered for mesh ["x"=2] but runs on mesh @m ["y"=2]}}
    %0 = pw.call @id(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}

// -----

// Tests that in_shardings has one entry per operand.
module {
  pw.mesh @m ["x"=2]
  module @id attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{in_shardings has 2 entries for 1 operands}}
    %0 = pw.call @id(%x) on @m {in_shardings = [[["x"]], [[]]]} : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    return
  }
}

// -----

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

// -----

// Tests that an unplaced call has no in_shardings.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{an unplaced call cannot have in_shardings}}
    %0 = pw.call @id(%x) {in_shardings = [[[]]]} : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}

// -----

// Tests that a computation has an entry function.
module {
  // expected-error@+1 {{computation @empty has no entry function @main}}
  module @empty {
  }
  func.func @main() {
    return
  }
}

// -----

// Tests that unreadable Shardy shardings are reported.
module {
  module @odd attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    // expected-error@+1 {{cannot read the sharding of argument #0}}
    func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}

// -----

// Tests that a transfer keeps the array type.
module {
  pw.mesh @a []
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.transfer changes the array type from tensor<4xf32> to tensor<8xf32>}}
    %0 = pw.transfer %x : !pw.array<4xf32, @a, [{}]> -> !pw.array<8xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a transfer moves placed arrays.
module {
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{pw.transfer moves placed arrays; both sides need a mesh}}
    %0 = pw.transfer %x : !pw.array<4xf32> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a transfer moves sharded arrays.
module {
  pw.mesh @a []
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32, @a>) {
    // expected-error@+1 {{pw.transfer moves sharded arrays; both sides need a sharding}}
    %0 = pw.transfer %x : !pw.array<4xf32, @a> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a transfer changes the mesh.
module {
  pw.mesh @a ["x"=2]
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.transfer stays on mesh @a; use pw.reshard within a mesh}}
    %0 = pw.transfer %x : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @a, [{"x"}]>
    return
  }
}

// -----

// Tests that a reshard keeps the mesh.
module {
  pw.mesh @a []
  pw.mesh @b []
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.reshard cannot move @a to @b; use pw.transfer}}
    %0 = pw.reshard %x : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that values are defined before use: a cycle is a dominance error.
module {
  module @id attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    // expected-error@+1 {{operand #0 does not dominate this use}}
    %0 = pw.call @id(%1) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    // expected-note@+1 {{operand defined here}}
    %1 = pw.call @id(%0) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}

// -----

// Tests that a program's body holds only pw ops.
module {
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{'foo.op' is not a pw op}}
    "foo.op"(%x) : (!pw.array<4xf32>) -> ()
    return
  }
}

// -----

// Tests that pw ops take pw arrays (the op definition).
module {
  func.func @main(%x: tensor<4xf32>) {
    // expected-error@+1 {{operand #0 must be pw array}}
    %0 = "pw.transfer"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
}

// -----

// Tests that a physical copy moves at least one piece.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.copy moves no pieces}}
    %0 = pw.copy %x [] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that physical copies need lowered meshes.
module {
  pw.mesh @a []
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{the source mesh @a has no devices; run lowering first}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a piece has the rank of the array.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 has rank 2 for an array of rank 1}}
    %0 = pw.copy %x [#pw.piece<0 [0, 0] -> 1 [0, 0] size [4, 1] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a piece reads a device holding a source shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 reads device 7, which holds no shard of the source}}
    %0 = pw.copy %x [#pw.piece<7 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a piece writes a device holding a destination shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 writes device 0, which holds no shard of the destination}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 0 [0] size [4] same_device>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a piece stays inside its shards.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b []  {devices = array<i64: 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{piece #0 reaches outside its source or destination shard}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 2 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a piece lands where it was read from.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b []  {devices = array<i64: 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{piece #0 lands at a different position of the array than the one it reads}}
    %0 = pw.gather %x [#pw.piece<1 [0] -> 2 [0] size [2] intra_island>, #pw.piece<0 [0] -> 2 [2] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a piece's link label agrees with its devices.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 0>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{piece #0 is labelled cross_island but goes from device 0 to 0}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 0 [0] size [4] cross_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that link labels are known (the attribute's verifier).
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{unknown link 'carrier_pigeon'}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] carrier_pigeon>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that pw.copy fills one whole destination shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{pw.copy moves exactly one piece, which fills a whole destination shard}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that pw.scatter reads one source device.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2]  {devices = array<i64: 2, 3>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{pw.scatter reads one source device}}
    %0 = pw.scatter %x [#pw.piece<0 [0] -> 2 [0] size [2] intra_island>, #pw.piece<1 [0] -> 3 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{"x"}]>
    return
  }
}

// -----

// Tests that pw.gather writes one destination device.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b ["x"=2]  {devices = array<i64: 2, 3>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    // expected-error@+1 {{pw.gather writes one destination device}}
    %0 = pw.gather %x [#pw.piece<0 [0] -> 2 [0] size [2] intra_island>, #pw.piece<1 [0] -> 3 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{"x"}]>
    return
  }
}

// -----

// Tests that the pieces of a gather fill its shard exactly once.
module {
  pw.mesh @a ["x"=2]  {devices = array<i64: 0, 1>}
  pw.mesh @b []  {devices = array<i64: 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    // expected-error@+1 {{the pieces of pw.gather must fill its destination shard exactly once}}
    %0 = pw.gather %x [#pw.piece<0 [0] -> 2 [0] size [3] intra_island>, #pw.piece<1 [2] -> 2 [2] size [2] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that only pw.assemble uses the partial result of a copy.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) -> !pw.array<4xf32, @b, [{}]> {
    // expected-error@+1 {{the result of pw.copy is partial; only pw.assemble may use it}}
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return %0 : !pw.array<4xf32, @b, [{}]>
  }
}

// -----

// Tests that pw.assemble joins physical copies only.
module {
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @b, [{}]>) {
    // expected-error@+1 {{part #0 of pw.assemble is not a pw.copy, pw.scatter or pw.gather}}
    %0 = pw.assemble %x : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that pw.assemble fills every destination shard.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b ["x"=2]  {devices = array<i64: 1, 2>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [2] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{"x"}]>
    // expected-error@+1 {{pw.assemble leaves the shard on device 2 empty}}
    %1 = pw.assemble %0 : !pw.array<4xf32, @b, [{"x"}]> -> !pw.array<4xf32, @b, [{"x"}]>
    return
  }
}

// -----

// Tests that pw.assemble fills each destination shard once.
module {
  pw.mesh @a []  {devices = array<i64: 0>}
  pw.mesh @b []  {devices = array<i64: 1>}
  func.func @main(%x: !pw.array<4xf32, @a, [{}]>) {
    %0 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    %1 = pw.copy %x [#pw.piece<0 [0] -> 1 [0] size [4] intra_island>] : !pw.array<4xf32, @a, [{}]> -> !pw.array<4xf32, @b, [{}]>
    // expected-error@+1 {{pw.assemble writes the shard on device 1 2 times}}
    %2 = pw.assemble %0, %1 : !pw.array<4xf32, @b, [{}]>, !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a computation's declared shardings divide its arrays.
module {
  // expected-error@+1 {{computation @odd: the sharding [{"x"}] of argument #0 (tensor<3xf32>) does not fit its mesh ["x"=2]: dimension 0 of size 3 is not divisible by 2}}
  module @odd attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<3xf32> {
      return %a : tensor<3xf32>
    }
  }
  func.func @main() {
    return
  }
}

// -----

// Tests that mesh sizes are multiplied with overflow checks: these axes
// multiply to 2 modulo 2^64, and the mesh is not a mesh of 2 devices.
module {
  // expected-error@+1 {{mesh @m ["x"=7, "y"=7905747460161236407, "z"=2] has more than 65536 devices}}
  pw.mesh @m ["x"=7, "y"=7905747460161236407, "z"=2]
  func.func @main(%a: !pw.array<4xf32, @m, [{}]>) {
    return
  }
}

// -----

// Tests that a mesh of more devices than pw supports is refused before
// anything is computed per device.
module {
  // expected-error@+1 {{mesh @m ["x"=1000000000] has more than 65536 devices}}
  pw.mesh @m ["x"=1000000000]
  func.func @main(%a: !pw.array<4xf32, @m, [{}]>) {
    return
  }
}

// -----

// Tests that an array's byte size is computed with overflow checks.
module {
  pw.mesh @a []
  // expected-error@+1 {{program input: !pw.array<4611686018427387904x4xf32, @a, [{}, {}]> has more than 2^63 bytes}}
  func.func @main(%x: !pw.array<4611686018427387904x4xf32, @a, [{}, {}]>) {
    return
  }
}

// -----

// Tests that a mesh whose device list is broken stops verification before
// the copies reading it are checked (their device positions would be
// wrong).
module {
  // expected-error@+1 {{mesh @a has 3 devices but its axes need 2}}
  pw.mesh @a ["x"=2] {devices = array<i64: 0, 1, 2>}
  pw.mesh @b [] {devices = array<i64: 3>}
  func.func @main(%x: !pw.array<4xf32, @a, [{"x"}]>) {
    %0 = pw.gather %x [#pw.piece<2 [0] -> 3 [0] size [2] intra_island>, #pw.piece<1 [0] -> 3 [2] size [2] intra_island>] : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
    %1 = pw.assemble %0 : !pw.array<4xf32, @b, [{}]> -> !pw.array<4xf32, @b, [{}]>
    return
  }
}

// -----

// Tests that a call's in_shardings must be what its computation declares:
// a lowered program that disagrees would hand the computation its shards
// in another layout than it was compiled for.
module {
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 1>}
  module @rows attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
      return %a : tensor<4x4xf32>
    }
  }
  func.func @main(%x: !pw.array<4x4xf32, @m, [{}, {"x"}]>) {
    // expected-error@+1 {{in_shardings #0 is [{}, {"x"}] but computation @rows takes argument #0 as [{"x"}, {}]}}
    %0 = pw.call @rows(%x) on @m {in_shardings = [[[], ["x"]]]} : (!pw.array<4x4xf32, @m, [{}, {"x"}]>) -> !pw.array<4x4xf32, @m, [{"x"}, {}]>
    return
  }
}

// -----

// Tests that a call's result types must carry the sharding its
// computation produces.
module {
  pw.mesh @m ["x"=2] {devices = array<i64: 0, 1>}
  module @rows attributes {mhlo.num_partitions = 2 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
      return %a : tensor<4x4xf32>
    }
  }
  func.func @main(%x: !pw.array<4x4xf32, @m, [{"x"}, {}]>) {
    // expected-error@+1 {{result #0 is sharded [{}, {"x"}] but computation @rows produces [{"x"}, {}]}}
    %0 = pw.call @rows(%x) on @m {in_shardings = [[["x"], []]]} : (!pw.array<4x4xf32, @m, [{"x"}, {}]>) -> !pw.array<4x4xf32, @m, [{}, {"x"}]>
    return
  }
}

// -----

// Tests that in_shardings lists axis names and nothing else (a number
// among the names would silently drop out).
module {
  pw.mesh @m ["x"=2]
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32, @m, [{}]>) {
    // expected-error@+1 {{in_shardings must list, per operand, the axes of each dimension}}
    %0 = pw.call @f(%x) on @m {in_shardings = [[["x", 3]]]} : (!pw.array<4xf32, @m, [{}]>) -> !pw.array<4xf32, @m, [{}]>
    return
  }
}

// -----

// Tests that a computation's partition count is bounded before meshes are
// made for it.
module {
  // expected-error@+1 {{computation @f has mhlo.num_partitions = 1000000000; it must be between 1 and 65536}}
  module @f attributes {mhlo.num_partitions = 1000000000 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}

// -----

// Tests that a computation's Shardy mesh is bounded like pw's meshes.
module {
  module @f attributes {mhlo.num_partitions = 2 : i32} {
    // expected-error@+1 {{cannot read sdy.mesh: mesh ["x"=4294967296, "y"=4294967296] has an axis below size 1 or more than 65536 devices}}
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4294967296, "y"=4294967296]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}

// -----

// Tests that @main's body is one block: ops in another block would never
// run, nor be checked.
module {
  // expected-error@+1 {{func.func @main has 2 blocks; a pw program's body is one block}}
  func.func @main() {
    "test.br"()[^next] : () -> ()
  ^next:
    return
  }
}

// -----

// Tests that nesting deeper than MLIR's parser can take is refused, at the
// bracket that goes too deep, before MLIR parses anything.
module attributes {t.deep = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ // expected-error {{nesting is deeper than 256 levels of brackets}}
]]]} {
  func.func @main() {
    return
  }
}

// -----

// Tests that a dense array of index elements, which crashes MLIR's parser,
// is refused before parsing.
// expected-error@+1 {{a dense array of index elements (array<index: ...>) is not supported}}
module attributes {t.x = array<index: 0>} {
  func.func @main() {
    return
  }
}

// -----

// Tests that a computation's partition count is its Shardy mesh's size (a
// computation that fits no mesh once made pw-assign-devices declare one the
// verifier then refused). Found by fuzzing.
module {
  // expected-error@+1 {{computation @f is compiled for 4 partition(s) but its mesh ["x"=2] has 2 device(s): no mesh fits it}}
  module @f attributes {mhlo.num_partitions = 4 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
  }
  func.func @main() {
    return
  }
}
