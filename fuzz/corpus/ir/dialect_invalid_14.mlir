// Tests that an axis shards one dimension at most.
module {
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{axis "x" shards more than one dimension}}
  func.func @main(%x: !pw.array<4x4xf32, @m, [{"x"}, {"x"}]>) {
    return
  }
}
