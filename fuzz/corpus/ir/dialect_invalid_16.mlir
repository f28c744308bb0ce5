// Tests that a sharding has one entry per dimension (the type's verifier).
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{sharding has 1 dimensions but the array has rank 2}}
  func.func @main(%x: !pw.array<4x4xf32, @m, [{"x"}]>) {
    return
  }
}
