//! Programs as MLIR bytecode (`pw-opt --emit-bytecode`): read wherever pw
//! reads programs, to the same program as their text; damaged, truncated
//! or foreign bytecode, and flags that need text, are clear errors.

use crate::common::pw_opt;
use crate::run::{files, program, pw_run, scratch};

/// Writes `pw-opt ARGS -o OUT` and returns OUT's bytes.
fn written(args: &[&str], out: &std::path::Path) -> Vec<u8> {
    let mut all = args.to_vec();
    let path = out.display().to_string();
    all.extend(["-o", &path]);
    let ran = pw_opt(&all, b"");
    assert_eq!(ran.code, 0, "pw-opt {all:?}: {}", ran.stderr);
    std::fs::read(out).expect("pw-opt's output")
}

/// Tests that a lowered program written as bytecode reads back as the
/// same program: printed, it is the text pw-opt prints directly.
#[test]
fn bytecode_reads_back_as_its_text() {
    let dir = scratch("bytecode-round-trip");
    let example = program("pipeline_train");
    let text = written(
        &[&example, "--pw-lower=devices=4"],
        &dir.join("lowered.mlir"),
    );
    let bytecode_path = dir.join("lowered.mlirbc");
    let bytecode = written(
        &[&example, "--pw-lower=devices=4", "--emit-bytecode"],
        &bytecode_path,
    );
    assert!(pw_dialect::is_bytecode(&bytecode));
    assert!(
        bytecode.len() < text.len() / 2,
        "bytecode {} bytes, text {}",
        bytecode.len(),
        text.len()
    );
    let printed = written(
        &[&bytecode_path.display().to_string()],
        &dir.join("back.mlir"),
    );
    assert_eq!(
        String::from_utf8_lossy(&printed),
        String::from_utf8_lossy(&text)
    );
    // Bytecode read from bytecode, written again, is the same file.
    let again = written(
        &[&bytecode_path.display().to_string(), "--emit-bytecode"],
        &dir.join("again.mlirbc"),
    );
    assert_eq!(again, bytecode);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tests that pw-run runs bytecode, lowered or not, to JAX's outputs.
#[test]
fn bytecode_runs_to_jaxs_outputs() {
    let dir = scratch("bytecode-run");
    let example = program("pipeline");
    for (name, lower) in [
        ("unlowered", None),
        ("lowered", Some("--pw-lower=devices=4")),
    ] {
        let path = dir.join(format!("{name}.mlirbc"));
        let mut args = vec![example.as_str(), "--emit-bytecode"];
        args.extend(lower);
        written(&args, &path);
        let mut run = vec![path.display().to_string()];
        run.extend(files("pipeline", "input_"));
        run.push("--expect".into());
        run.extend(files("pipeline", "expected_"));
        run.extend(["--devices".into(), "4".into()]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let out = pw_run(&run, b"");
        assert_eq!(out.code, 0, "{name}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("matches") && !out.stdout.contains("MISMATCH"),
            "{name}: {}",
            out.stdout
        );
        assert_eq!(
            out.stdout.contains("lowered    already"),
            lower.is_some(),
            "{name}: {}",
            out.stdout
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tests that bytecode that is damaged, truncated or not pw's is refused
/// with an error that says so, and that nothing is written.
#[test]
fn bad_bytecode_is_a_clear_error() {
    let dir = scratch("bytecode-bad");
    let path = dir.join("good.mlirbc");
    let good = written(&[&program("pipeline"), "--emit-bytecode"], &path);
    let mut damaged = good.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0x40;
    let mut foreign = good.clone();
    // The producer's first letters, as another tool would have named it.
    foreign[5..7].copy_from_slice(b"ML");
    let cases: [(&str, &[u8], &str); 4] = [
        ("a flipped bit", &damaged, "damaged or truncated"),
        (
            "a truncated file",
            &good[..good.len() / 2],
            "damaged or truncated",
        ),
        ("the header alone", &good[..8], "damaged or truncated"),
        ("another producer", &foreign, "did not write"),
    ];
    for (what, bytes, says) in cases {
        let input = dir.join("input.mlirbc");
        std::fs::write(&input, bytes).expect("write");
        let output = dir.join("never.mlir");
        let out = pw_opt(
            &[
                &input.display().to_string(),
                "-o",
                &output.display().to_string(),
            ],
            b"",
        );
        assert_eq!(out.code, 1, "{what}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{what}: {}", out.stderr);
        assert!(
            out.stderr.contains("input.mlirbc:1:1: error:"),
            "{what}: {}",
            out.stderr
        );
        assert!(!output.exists(), "{what}: an output was written");
        let run = pw_run(&[&input.display().to_string(), "--random-inputs"], b"");
        assert_eq!(run.code, 1, "pw-run, {what}: {}", run.stderr);
        assert!(run.stderr.contains(says), "pw-run, {what}: {}", run.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tests that flags which need text are refused for bytecode, and
/// `--emit-bytecode` with a view instead of the program.
#[test]
fn flags_that_need_text_are_refused() {
    let dir = scratch("bytecode-flags");
    let path = dir.join("p.mlirbc");
    written(&[&program("pipeline"), "--emit-bytecode"], &path);
    let p = path.display().to_string();
    for flag in ["--split-input-file", "--verify-diagnostics"] {
        let out = pw_opt(&[&p, flag], b"");
        assert_eq!(out.code, 1, "{flag}: {}", out.stderr);
        assert!(out.stderr.contains("need text"), "{flag}: {}", out.stderr);
    }
    let out = pw_opt(
        &[&program("pipeline"), "--emit-bytecode", "--emit=dot"],
        b"",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("--emit=mlir"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
