// Tests that more meshes than devices share devices, least used first.
module {
  pw.mesh @a ["x"=4]
  pw.mesh @b ["x"=4]
  pw.mesh @c ["x"=2]
  func.func @main() {
    return
  }
}
