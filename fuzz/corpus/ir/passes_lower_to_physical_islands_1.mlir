// Tests a device kind served by its own island.
module {
  pw.mesh @g ["x"=2] {kind = "gpu"}
  pw.mesh @c ["x"=2] {kind = "cpu"}
  func.func @main() {
    return
  }
}
