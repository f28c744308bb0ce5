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
