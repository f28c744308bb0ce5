// Tests that axis names and sizes come in pairs (generic form).
module {
  // expected-error@+1 {{mesh @m has 2 axis names but 1 sizes}}
  "pw.mesh"() {sym_name = "m", axis_names = ["x", "y"], axis_sizes = array<i64: 2>} : () -> ()
  func.func @main() {
    return
  }
}
