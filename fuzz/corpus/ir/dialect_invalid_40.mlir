// Tests that pw ops take pw arrays (the op definition).
module {
  func.func @main(%x: tensor<4xf32>) {
    // expected-error@+1 {{operand #0 must be pw array}}
    %0 = "pw.transfer"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
}
