// Tests an unsatisfiable device kind.
module {
  // expected-error@+1 {{mesh @g needs devices of kind "gpu"; the topology has none}}
  pw.mesh @g ["x"=2] {kind = "gpu"}
  func.func @main() {
    return
  }
}
