// Tests that a dense array of index elements, which crashes MLIR's parser,
// is refused before parsing.
// expected-error@+1 {{a dense array of index elements (array<index: ...>) is not supported}}
module attributes {t.x = array<index: 0>} {
  func.func @main() {
    return
  }
}
