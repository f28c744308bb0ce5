// Tests that a program needs func.func @main.
// expected-error@+1 {{not a pw program: no func.func @main}}
module {
  pw.mesh @m ["x"=2]
}
