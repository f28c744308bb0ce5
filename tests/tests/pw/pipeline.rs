//! The passes on the shipped examples: a snapshot of the program after
//! each pass of `--pw-lower` (computations elided: passes only annotate
//! them), the lowered program parsing back unchanged, and idempotence.

use crate::common::pw_opt;
use pw_compiler::{LowerOptions, Pipeline};
use pw_tests::repo_root;

fn examples() -> Vec<(String, String)> {
    ["pipeline", "rl_step", "partially_placed"]
        .iter()
        .map(|name| {
            let path = repo_root().join("examples").join(format!("{name}.mlir"));
            let text = std::fs::read_to_string(&path).expect("example exists");
            (name.to_string(), text)
        })
        .collect()
}

/// Runs pw-opt over program text; the test fails on any error.
fn opt(args: &[&str], input: &str) -> String {
    let mut all = vec!["-"];
    all.extend_from_slice(args);
    let out = pw_opt(&all, input.as_bytes());
    assert_eq!(out.code, 0, "pw-opt {args:?} failed:\n{}", out.stderr);
    out.stdout
}

/// The passes of `--pw-lower`, in order.
fn full_pipeline() -> Vec<&'static str> {
    Pipeline::lower(&LowerOptions::default()).pass_names()
}

/// The program with each computation's body replaced by `...`.
pub fn elide_computations(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if inside {
            if line == "  }" {
                out.push_str("    ...\n  }\n");
                inside = false;
            }
            continue;
        }
        if line.starts_with("  module @") && line.ends_with('{') {
            inside = true;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn examples_after_each_pass() {
    for (name, mut text) in examples() {
        for (i, pass) in full_pipeline().iter().enumerate() {
            text = opt(&[&format!("--{pass}")], &text);
            insta::assert_snapshot!(format!("{name}__{i}_{pass}"), elide_computations(&text));
        }
    }
}

#[test]
fn lowered_examples_parse_back_unchanged() {
    for (name, text) in examples() {
        let lowered = opt(&["--pw-lower"], &text);
        assert_eq!(
            opt(&[], &lowered),
            lowered,
            "{name}: lowered IR does not print stably"
        );
    }
}

#[test]
fn full_pipeline_is_idempotent() {
    for (name, text) in examples() {
        let once = opt(&["--pw-lower"], &text);
        let twice = opt(&["--pw-lower"], &once);
        assert_eq!(
            once, twice,
            "{name}: a second --pw-lower changed the program"
        );
    }
}

#[test]
fn each_pass_is_idempotent() {
    for (name, mut text) in examples() {
        for pass in full_pipeline() {
            let flag = format!("--{pass}");
            let once = opt(&[&flag], &text);
            let twice = opt(&[&flag], &once);
            assert_eq!(once, twice, "{name}: {pass} twice differs from once");
            text = once;
        }
    }
}

#[test]
fn pass_pipeline_mixes_pw_and_upstream_passes() {
    let (_, text) = &examples()[0];
    let mixed = opt(
        &["--pass-pipeline=builtin.module(pw-assign-devices,pw-propagate-shardings,canonicalize,pw-insert-transfers,cse,pw-fold-transfers,symbol-dce,pw-dce,pw-lower-to-physical{devices=8},pw-schedule)"],
        text,
    );
    assert_eq!(mixed, opt(&["--pw-lower"], text));
}

#[test]
fn pipeline_errors_are_reported() {
    let (_, text) = &examples()[0];
    for (args, message) in [
        (
            vec!["--pass-pipeline=builtin.module(pw-nonsense)"],
            "unknown pass 'pw-nonsense'",
        ),
        (
            vec!["--pass-pipeline=pw-dce"],
            "expected 'builtin.module(...)'",
        ),
        (
            vec!["--pw-lower=colour=blue"],
            "unknown option 'colour' of pw-lower",
        ),
        (
            vec!["--pw-lower-to-physical=devices=zero"],
            "devices=zero is not a number",
        ),
        (
            vec!["--pw-lower-to-physical=topology=/nonexistent.toml"],
            "cannot read topology /nonexistent.toml",
        ),
        (
            vec!["--pw-dce", "--pass-pipeline=builtin.module(pw-dce)"],
            "either --pass-pipeline or pass flags",
        ),
    ] {
        let mut all = vec!["-"];
        all.extend(args.iter().copied());
        let out = pw_opt(&all, text.as_bytes());
        assert_eq!(out.code, 1, "{args:?} should fail");
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn list_passes_and_print_ir_after_all() {
    let out = pw_opt(&["--list-passes"], b"");
    assert_eq!(out.code, 0);
    for pass in full_pipeline() {
        assert!(out.stdout.contains(pass), "--list-passes lacks {pass}");
    }
    let (_, text) = &examples()[0];
    let out = pw_opt(
        &["-", "--pw-lower", "--print-ir-after-all"],
        text.as_bytes(),
    );
    assert_eq!(out.code, 0);
    for pass in full_pipeline() {
        assert!(
            out.stderr
                .contains(&format!("// -----// IR Dump After {pass} //----- //")),
            "no dump after {pass}"
        );
    }
}

#[test]
fn views() {
    for (name, text) in examples() {
        let summary = opt(&["--pw-lower", "--emit=summary"], &text);
        insta::assert_snapshot!(format!("{name}__summary"), summary);
        let dot = opt(&["--pw-lower", "--emit=dot"], &text);
        assert!(
            dot.starts_with("digraph pw {") && dot.contains("subgraph \"cluster_"),
            "{name}: {dot}"
        );
        insta::assert_snapshot!(format!("{name}__dot"), dot);
    }
}

/// Reading a program into a plan leaves it as it was (the reader once
/// stripped pw's attributes from the computations it printed).
#[test]
fn reading_a_plan_changes_nothing() {
    for (name, text) in examples() {
        let lowered = opt(&["--pw-lower"], &text);
        let context = pw_dialect::new_context();
        let module = pw_dialect::parse_source(&context, &lowered, &name).expect("parses");
        let before = module.as_operation().to_string();
        let analysis = pw_dialect::verify::verify(&module).expect("valid");
        let plan = pw_compiler::export::to_plan(&analysis).expect("plan");
        assert!(plan
            .computations
            .iter()
            .all(|c| matches!(&c.module, pw_core::plan::Module::Text(t) if !t.contains("pw.num_partitions"))));
        drop(analysis);
        assert_eq!(module.as_operation().to_string(), before, "{name}");
    }
}
