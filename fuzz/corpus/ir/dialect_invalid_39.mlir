// Tests that a program's body holds only pw ops.
module {
  func.func @main(%x: !pw.array<4xf32>) {
    // expected-error@+1 {{'foo.op' is not a pw op}}
    "foo.op"(%x) : (!pw.array<4xf32>) -> ()
    return
  }
}
