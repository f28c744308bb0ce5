//! The programs under examples/ verify and print stably.

use crate::common::pw_opt;
use pw_tests::repo_root;

fn example_programs() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(repo_root().join("examples"))
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "expected the shipped examples, found {files:?}"
    );
    files
}

/// `pw-opt FILE` prints IR that pw-opt parses and prints identically.
#[test]
fn examples_round_trip() {
    for path in example_programs() {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_owned();
        let first = pw_opt(&[path.to_str().unwrap_or("")], b"");
        assert_eq!(first.code, 0, "{name}: {}", first.stderr);
        let second = pw_opt(&["-"], first.stdout.as_bytes());
        assert_eq!(second.code, 0, "{name} (reprinted): {}", second.stderr);
        assert_eq!(first.stdout, second.stdout, "{name} does not print stably");
        insta::assert_snapshot!(format!("roundtrip_{name}"), first.stdout);
    }
}
