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
