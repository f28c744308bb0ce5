// Tests that a computation has an entry function.
module {
  // expected-error@+1 {{computation @empty has no entry function @main}}
  module @empty {
  }
  func.func @main() {
    return
  }
}
