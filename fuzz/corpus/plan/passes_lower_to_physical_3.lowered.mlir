module {
  pw.mesh @a ["x"=4] {devices = array<i64: 0, 1, 2, 3>}
  pw.mesh @b ["x"=4] {devices = array<i64: 4, 5, 6, 7>}
  pw.mesh @c ["x"=2] {devices = array<i64: 0, 1>}
  func.func @main() attributes {pw.schedule = "critical-path"} {
    return
  }
}
