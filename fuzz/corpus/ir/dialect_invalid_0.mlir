// Every rule of the program verifier, one failing case each.

// Tests that only meshes, computations and @main live at the top level.
module {
  // expected-error@+1 {{'foo.bar' cannot appear at the top level of a pw program}}
  "foo.bar"() : () -> ()
  func.func @main() {
    return
  }
}
