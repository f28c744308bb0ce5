// Tests that a program's verifier errors stop the pass before it runs.
module {
  func.func @main(%x: !pw.array<4xf32>) -> !pw.array<4xf32> {
    // expected-error@+1 {{call to unknown computation @missing}}
    %0 = pw.call @missing(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return %0 : !pw.array<4xf32>
  }
}
