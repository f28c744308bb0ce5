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
