//! pw-opt on inputs that are not pw programs: always exit code 1 with an
//! `error:` diagnostic, never a panic.

use crate::common::pw_opt;
use pw_tests::repo_root;

fn assert_rejected(what: &str, input: &[u8]) {
    let out = pw_opt(&["-"], input);
    assert_eq!(
        out.code, 1,
        "{what}: exit code {} (stderr: {})",
        out.code, out.stderr
    );
    assert!(
        out.stderr.contains("error:"),
        "{what}: no error diagnostic in {:?}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{what}: {}", out.stderr);
}

#[test]
fn empty_input() {
    assert_rejected("empty", b"");
    assert_rejected("whitespace", b"  \n\n");
}

#[test]
fn truncated_programs() {
    let text = std::fs::read(repo_root().join("examples/pipeline.mlir")).expect("example");
    for cut in [1, 10, text.len() / 3, text.len() / 2, text.len() - 2] {
        assert_rejected(&format!("first {cut} bytes"), &text[..cut]);
    }
}

#[test]
fn binary_garbage() {
    // A fixed linear congruential sequence: the same garbage every run.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in [1usize, 7, 64, 4096] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 56) as u8
            })
            .collect();
        assert_rejected(&format!("{len} random bytes"), &bytes);
    }
    assert_rejected("NUL bytes", &[0u8; 32]);
}

#[test]
fn wrong_dialect() {
    let cases: &[(&str, &str)] = &[
        (
            "pretty-form StableHLO",
            "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
        ),
        (
            "a generic-form StableHLO function, not a pw program",
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"stablehlo.add\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
        ),
        (
            "foreign ops in the program body",
            "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"arith.addf\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
        ),
        ("LLVM IR", "define i32 @main() {\n  ret i32 0\n}\n"),
        ("JSON", "{\"program\": [1, 2, 3]}\n"),
        ("an unknown pw op", "module {\n  \"pw.frobnicate\"() : () -> ()\n}\n"),
        ("an unknown pw type", "func.func @main(%a: !pw.tensor<4xf32>) {\n  return\n}\n"),
    ];
    for (what, text) in cases {
        assert_rejected(what, text.as_bytes());
    }
}

#[test]
fn missing_input_file() {
    let out = pw_opt(&["/nonexistent/program.mlir"], b"");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("error: cannot read /nonexistent/program.mlir"),
        "{}",
        out.stderr
    );
}

#[test]
fn failed_run_writes_no_output_file() {
    let dir = std::env::temp_dir().join(format!("pw-opt-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let target = dir.join("out.mlir");
    let out = pw_opt(&["-", "-o", target.to_str().unwrap_or("")], b"garbage");
    assert_eq!(out.code, 1);
    assert!(
        !target.exists(),
        "a failed run left {} behind",
        target.display()
    );
    assert_eq!(
        std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0),
        0,
        "temporary files left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writing_to_a_device_keeps_the_device() {
    let out = pw_opt(
        &["-", "-o", "/dev/null"],
        std::fs::read(repo_root().join("examples/pipeline.mlir"))
            .expect("example")
            .as_slice(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let null = std::fs::metadata("/dev/null").expect("/dev/null exists");
    assert!(
        !null.is_file(),
        "pw-opt -o /dev/null replaced the device with a file"
    );
}

/// Runs pw-opt on `input` with `args`; returns stderr after checking that
/// it failed with an error, not a panic.
fn refused(what: &str, args: &[&str], input: &[u8]) -> String {
    let mut all = vec!["-"];
    all.extend_from_slice(args);
    let out = pw_opt(&all, input);
    assert_eq!(
        out.code, 1,
        "{what}: exit code {} ({})",
        out.code, out.stderr
    );
    assert!(out.stderr.contains("error:"), "{what}: {}", out.stderr);
    out.stderr
}

/// Nesting that overflowed MLIR's parser stack (a signal death) is refused
/// at the bracket that goes too deep; nesting within the limit parses and
/// prints, on a test thread's small stack.
#[test]
fn deep_nesting_is_a_located_error() {
    let n = 100_000;
    let cases = [
        (
            "attributes",
            format!(
                "module attributes {{t.x = {}{}}} {{}}\n",
                "[".repeat(n),
                "]".repeat(n)
            ),
        ),
        (
            "dictionaries",
            format!(
                "module attributes {{t.x = {}1{}}} {{}}\n",
                "{a = ".repeat(n),
                "}".repeat(n)
            ),
        ),
        (
            "regions",
            format!(
                "\"builtin.module\"() ({}{}) : () -> ()\n",
                "{ \"t.op\"() (".repeat(n),
                ") : () -> () }".repeat(n)
            ),
        ),
        (
            "types",
            format!(
                "func.func @main(%a: {}i32{}) {{\n  return\n}}\n",
                "tuple<".repeat(n),
                ">".repeat(n)
            ),
        ),
    ];
    for (what, text) in cases {
        let stderr = refused(what, &[], text.as_bytes());
        assert!(
            stderr.contains("<stdin>:1:") && stderr.contains("nesting is deeper than 256 levels"),
            "{what}: {stderr}"
        );
    }
    let within = format!(
        "module attributes {{t.x = {}{}}} {{\n  func.func @main() {{\n    return\n  }}\n}}\n",
        "[".repeat(250),
        "]".repeat(250)
    );
    let out = pw_opt(&["-"], within.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(&"[".repeat(250)));
}

/// Affine expressions parse recursively per term: a long one overflowed the
/// parser's stack without any nesting.
#[test]
fn long_affine_expressions_are_refused() {
    let terms = vec!["d0"; 100_000].join(" + ");
    let text = format!(
        "module attributes {{t.x = affine_map<(d0) -> ({terms})>}} {{\n  func.func @main() {{\n    return\n  }}\n}}\n"
    );
    let stderr = refused("affine", &[], text.as_bytes());
    assert!(
        stderr.contains("an affine expression of more than 1024 operators"),
        "{stderr}"
    );
}

/// A program of 20,000 bad calls reports the first 100 errors and says it
/// stopped (the report took time quadratic in the errors).
#[test]
fn errors_are_capped() {
    let mut text = String::from("func.func @main(%x: !pw.array<4xf32>) {\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "  %v{i} = pw.call @nowhere(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>\n"
        ));
    }
    text.push_str("  return\n}\n");
    let stderr = refused("many errors", &[], text.as_bytes());
    assert_eq!(
        stderr
            .matches("call to unknown computation @nowhere")
            .count(),
        100
    );
    assert!(
        stderr.contains("error: too many errors; stopping after 100"),
        "{}",
        &stderr[stderr.len() - 300..]
    );
}

/// A source line of a megabyte is quoted around its column, not whole.
#[test]
fn long_lines_are_cut_in_diagnostics() {
    let text = format!(
        "func.func @main() {{ {} \"t.bad\"() : () -> () \n return\n}}\n",
        " ".repeat(1 << 20)
    );
    let stderr = refused("long line", &[], text.as_bytes());
    assert!(stderr.len() < 4096, "{} bytes of diagnostics", stderr.len());
    assert!(
        stderr.contains("...") && stderr.contains("\"t.bad\""),
        "{stderr}"
    );
}

/// `expected-error@+N` with a huge N is a malformed directive, not an
/// overflow.
#[test]
fn expectation_offsets_do_not_overflow() {
    let text = "// expected-error@+18446744073709551615 {{x}}\nfunc.func @main() {\n  return\n}\n";
    let stderr = refused("offset", &["--verify-diagnostics"], text.as_bytes());
    assert!(stderr.contains("invalid line designator"), "{stderr}");
}

/// Computations whose shapes are dynamic, or whose intermediate arrays have
/// more elements than 64 bits count, are costed without overflow.
#[test]
fn computations_with_extreme_shapes_are_costed() {
    let text = r#"
module {
  module @dynamic attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %a : tensor<?x4xf32>
    }
  }
  module @big attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<4611686018427387904x4xf32>}> : () -> tensor<4611686018427387904x4xf32>
      return %a : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) -> !pw.array<4xf32> {
    %0 = pw.call @big(%x) : (!pw.array<4xf32>) -> !pw.array<4xf32>
    return %0 : !pw.array<4xf32>
  }
}
"#;
    let out = pw_opt(&["-", "--pw-lower"], text.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Sizes that would make lowering allocate in proportion to a number in the
/// input are refused before anything is allocated.
#[test]
fn untrusted_sizes_are_bounded_before_allocation() {
    let empty = "func.func @main() {\n  return\n}\n";
    let stderr = refused(
        "local island",
        &["--pw-lower-to-physical=devices=100000000000"],
        empty.as_bytes(),
    );
    assert!(
        stderr.contains("a local island has 1 to 65536 devices"),
        "{stderr}"
    );
    // One move between a mesh of 8192 row shards and one of 4096 column
    // shards: 33 million pieces. Counted, not planned.
    let text = r#"
module {
  pw.mesh @a ["x"=8192]
  pw.mesh @b ["x"=4096]
  func.func @main(%x: !pw.array<8192x4096xf32, @a, [{"x"}, {}]>) -> !pw.array<8192x4096xf32, @b, [{}, {"x"}]> {
    %0 = pw.transfer %x : !pw.array<8192x4096xf32, @a, [{"x"}, {}]> -> !pw.array<8192x4096xf32, @b, [{}, {"x"}]>
    return %0 : !pw.array<8192x4096xf32, @b, [{}, {"x"}]>
  }
}
"#;
    let stderr = refused(
        "pieces",
        &["--pw-lower-to-physical=devices=16384"],
        text.as_bytes(),
    );
    assert!(
        stderr.contains("lowering would make more than 16777216 pieces"),
        "{stderr}"
    );
}

/// Topology files are untrusted too: refused with their path, never read
/// into memory in proportion to what they claim.
#[test]
fn hostile_topologies_are_refused() {
    let dir = std::env::temp_dir().join(format!("pw-topologies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let nested = format!(
        "{{\"island\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let many: Vec<String> = (0..70_000).map(|d| d.to_string()).collect();
    let cases = [
        ("nested.json", nested, "nested.json"),
        (
            "many.toml",
            format!(
                "[[island]]\nname = \"a\"\nkind = \"cpu\"\ndevices = [{}]\n",
                many.join(", ")
            ),
            "at most 65536 are supported",
        ),
        (
            "negative.toml",
            "[[island]]\nname = \"a\"\nkind = \"cpu\"\ndevices = [-1]\n".to_owned(),
            "negative or listed twice",
        ),
    ];
    let empty = "func.func @main() {\n  return\n}\n";
    for (name, text, message) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        let option = format!("--pw-lower-to-physical=topology={}", path.display());
        let stderr = refused(name, &[&option], empty.as_bytes());
        assert!(stderr.contains(message), "{name}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
