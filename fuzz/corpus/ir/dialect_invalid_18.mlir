// Tests that a call's callee exists.
module {
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{call to unknown computation @nothing}}
    %0 = pw.call @nothing(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return
  }
}
