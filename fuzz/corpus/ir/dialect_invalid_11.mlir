// Tests that two symbols cannot share a name (MLIR's symbol table).
module {
  // expected-note@+1 {{see existing symbol definition here}}
  pw.mesh @m ["x"=2]
  // expected-error@+1 {{redefinition of symbol named 'm'}}
  pw.mesh @m ["x"=4]
  func.func @main() {
    return
  }
}
