// Tests that meshes spread over islands by free devices, same_island_as
// keeps two meshes on one island, and pieces are labelled with the link
// they cross.
module {
  pw.mesh @a ["x"=4]
  pw.mesh @b ["x"=4]
  pw.mesh @near ["x"=2] {same_island_as = @a}
  func.func @main(%x: !pw.array<8xf32, @a, [{"x"}]>) -> (!pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @near, [{"x"}]>) {
    %0 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @b, [{}]>
    %1 = pw.transfer %x : !pw.array<8xf32, @a, [{"x"}]> -> !pw.array<8xf32, @near, [{"x"}]>
    return %0, %1 : !pw.array<8xf32, @b, [{}]>, !pw.array<8xf32, @near, [{"x"}]>
  }
}
