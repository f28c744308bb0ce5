//! MLIR-style test files: every `tests/ir/**/*.mlir` starts with
//! `// RUN: [not] pw-opt %s ARGS` (`%s` is the file, `%S` its directory).
//! The file runs through pw-opt with those
//! arguments; it must succeed (or fail, with `not`), and its output is a
//! snapshot. Negative cases check their diagnostics with
//! `--verify-diagnostics` and `expected-error` comments.

use crate::common::pw_opt;
use pw_tests::repo_root;
use std::path::{Path, PathBuf};

struct Run {
    expect_failure: bool,
    args: Vec<String>,
}

fn run_line(source: &str, path: &str) -> Run {
    let line = source
        .lines()
        .find_map(|l| l.trim().strip_prefix("// RUN:"))
        .unwrap_or_else(|| panic!("{path}: no `// RUN:` line"));
    let mut words: Vec<&str> = line.split_whitespace().collect();
    let expect_failure = words.first() == Some(&"not");
    if expect_failure {
        words.remove(0);
    }
    assert_eq!(
        words.first(),
        Some(&"pw-opt"),
        "{path}: RUN must invoke pw-opt"
    );
    let dir = Path::new(path)
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let args = words[1..]
        .iter()
        .map(|w| w.replace("%s", path).replace("%S", &dir))
        .collect();
    Run {
        expect_failure,
        args,
    }
}

/// Every `.mlir` file under `dir`, recursively, sorted.
fn mlir_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)
        .expect("tests/ir is readable")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            files.extend(mlir_files(&path));
        } else if path.extension().is_some_and(|e| e == "mlir") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn ir_files() {
    let root = repo_root().join("tests/ir");
    let files = mlir_files(&root);
    assert!(!files.is_empty(), "no test files under {}", root.display());
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable test file");
        let relative = path.strip_prefix(&root).unwrap_or(&path).with_extension("");
        let snapshot = relative.to_string_lossy().replace(['/', '\\'], "__");
        let name = path.display().to_string();
        let run = run_line(&source, &name);
        let args: Vec<&str> = run.args.iter().map(String::as_str).collect();
        let out = pw_opt(&args, b"");
        if run.expect_failure {
            assert_eq!(out.code, 1, "{name}: expected failure\n{}", out.stderr);
            insta::assert_snapshot!(snapshot, out.stderr);
        } else {
            assert_eq!(out.code, 0, "{name} failed:\n{}", out.stderr);
            insta::assert_snapshot!(snapshot, out.stdout);
        }
    }
}
