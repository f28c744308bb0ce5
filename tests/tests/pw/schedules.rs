//! The pipeline schedules (`pw-schedule{policy=...}`) on the examples: a
//! checker of every scheduled order, JAX's results under every policy, and
//! the memory each policy costs, estimated by `--emit=summary` and measured
//! by `pw-run --stats`.

use crate::{
    common::pw_opt,
    pipeline::elide_computations,
    run::{program, run_example},
};
use std::collections::BTreeMap;

const POLICIES: [&str; 3] = ["critical-path", "gpipe", "1f1b"];

fn lower(example: &str, policy: &str) -> String {
    let out = pw_opt(
        &[
            &program(example),
            &format!("--pw-lower=devices=4 schedule={policy}"),
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{example} under {policy}: {}", out.stderr);
    out.stdout
}

/// One `pw.call` of a lowered program.
struct Call {
    callee: String,
    mesh: String,
}

/// Checks that every op of `text`'s `@main` reads only values defined
/// before it, and returns its calls in order.
fn check_dataflow(text: &str) -> Vec<Call> {
    let body = text.split("func.func @main(").nth(1).expect("a @main");
    let mut defined: std::collections::HashSet<String> = Default::default();
    let mut calls = Vec::new();
    for line in body.lines().skip(1) {
        let line = line.trim();
        if line.starts_with('}') {
            break;
        }
        let (results, rest) = match line.split_once(" = ") {
            Some((r, rest)) if r.starts_with('%') => (r, rest),
            _ => ("", line),
        };
        // The operands: every %name before the type list.
        let operands_text = rest.split(" : ").next().unwrap_or("");
        for word in operands_text
            .split(|c: char| !(c.is_alphanumeric() || c == '%' || c == '_' || c == '#'))
            .filter(|w| w.starts_with('%'))
        {
            let name = word.split('#').next().unwrap_or(word);
            assert!(
                name.starts_with("%arg") || defined.contains(name),
                "{name} is read before it is defined: {line}"
            );
        }
        let base = results.split(':').next().unwrap_or("").to_owned();
        if !base.is_empty() {
            defined.insert(base);
        }
        if let Some(call) = rest.strip_prefix("pw.call @") {
            let callee = call.split('(').next().unwrap_or("").to_owned();
            let mesh = call
                .split(" on @")
                .nth(1)
                .and_then(|m| m.split_whitespace().next())
                .unwrap_or("")
                .to_owned();
            calls.push(Call { callee, mesh });
        }
    }
    calls
}

/// Forward / backward letters of each stage of pipeline_train, in order.
fn stage_orders(calls: &[Call]) -> BTreeMap<String, String> {
    let mut orders: BTreeMap<String, String> = BTreeMap::new();
    for c in calls {
        let letter = if c.callee.starts_with("jit_stage_forward") {
            'F'
        } else if c.callee.starts_with("jit_stage_backward") {
            'B'
        } else {
            continue;
        };
        orders.entry(c.mesh.clone()).or_default().push(letter);
    }
    orders
}

/// The most microbatches whose forward has run and whose backward has not.
fn most_in_flight(order: &str) -> usize {
    let mut in_flight: usize = 0;
    let mut most = 0;
    for c in order.chars() {
        match c {
            'F' => in_flight += 1,
            _ => in_flight = in_flight.saturating_sub(1),
        }
        most = most.max(in_flight);
    }
    most
}

/// The checker: every order respects the dataflow; GPipe runs every
/// forward of a stage before its first backward; 1F1B keeps at most
/// `4 - s` microbatches in flight on stage `s` (of 4); scheduling again
/// changes nothing.
#[test]
fn scheduled_orders_respect_dataflow_and_policy() {
    for policy in POLICIES {
        let text = lower("pipeline_train", policy);
        assert!(text.contains(&format!("pw.schedule = \"{policy}\"")));
        let orders = stage_orders(&check_dataflow(&text));
        // Stages 0..2 have forward and backward calls (stage 3's is fused).
        assert_eq!(orders.len(), 3, "{policy}: {orders:?}");
        for (s, (mesh, order)) in orders.iter().enumerate() {
            assert_eq!(order.matches('F').count(), 8, "{policy} {mesh}: {order}");
            assert_eq!(order.matches('B').count(), 8, "{policy} {mesh}: {order}");
            match policy {
                "gpipe" => assert_eq!(order, &"FFFFFFFFBBBBBBBB", "{mesh}"),
                "1f1b" => assert_eq!(most_in_flight(order), 4 - s, "{mesh}: {order}"),
                _ => {}
            }
        }
        let again = pw_opt(
            &["-", &format!("--pw-schedule=policy={policy}")],
            text.as_bytes(),
        );
        assert_eq!(again.code, 0, "{}", again.stderr);
        assert_eq!(
            again.stdout, text,
            "{policy}: scheduling again changed the order"
        );
    }
}

/// The training step's scheduled program under each pipeline policy.
#[test]
fn pipeline_train_scheduled_per_policy() {
    for policy in ["gpipe", "1f1b"] {
        insta::assert_snapshot!(
            format!("pipeline_train__{policy}"),
            elide_computations(&lower("pipeline_train", policy))
        );
    }
}

/// Under every policy, the training step gives JAX's results.
#[test]
fn pipeline_train_matches_jax_under_every_policy() {
    for policy in POLICIES {
        let out = run_example(
            "pipeline_train",
            &["--devices", "4", "--schedule", policy, "--atol", "1e-5"],
        );
        assert_eq!(out.code, 0, "{policy}:\n{}\n{}", out.stdout, out.stderr);
        assert_eq!(out.stdout.matches("matches").count(), 16, "{}", out.stdout);
    }
}

/// Bytes per device from `--emit=summary`'s memory table.
fn estimated_peaks(example: &str, policy: &str) -> BTreeMap<i64, u64> {
    let out = pw_opt(
        &[
            &program(example),
            &format!("--pw-lower=devices=4 schedule={policy}"),
            "--emit=summary",
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let table = out
        .stdout
        .split("Memory (per device, in this order)")
        .nth(1)
        .expect("a memory table");
    table
        .lines()
        .filter_map(|l| {
            let device = l.split_whitespace().next()?.parse().ok()?;
            let bytes = l.split('(').nth(1)?.split(' ').next()?.parse().ok()?;
            Some((device, bytes))
        })
        .collect()
}

/// Bytes per device from `pw-run --stats`.
fn measured_peaks(example: &str, policy: &str) -> BTreeMap<i64, u64> {
    let out = run_example(
        example,
        &["--devices", "4", "--schedule", policy, "--stats"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("device ")?;
            let mut words = rest.split_whitespace();
            Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
        })
        .collect()
}

/// The estimate is what the runtime holds, byte for byte; 1F1B holds fewer
/// activations than GPipe on the middle stages (32 KiB each: GPipe all 8,
/// 1F1B at most 4 - s, plus one arriving).
#[test]
fn memory_per_policy_estimated_and_measured() {
    let mut peaks = BTreeMap::new();
    for policy in POLICIES {
        let estimated = estimated_peaks("pipeline_train", policy);
        let measured = measured_peaks("pipeline_train", policy);
        assert_eq!(estimated.len(), 4, "{policy}: {estimated:?}");
        assert_eq!(estimated, measured, "{policy}: estimated vs measured");
        peaks.insert(policy, estimated);
    }
    let activation = 128 * 64 * 4;
    for device in [1, 2] {
        let saved = peaks["gpipe"][&device] - peaks["1f1b"][&device];
        assert!(
            saved >= (8 - (4 - device as u64) - 1) * activation,
            "device {device}: 1F1B saves only {saved} B ({peaks:?})"
        );
    }
}

/// The pipeline example and the RL step are forward-only: GPipe orders
/// them, 1F1B says why not; the partially placed program has no
/// microbatches.
#[test]
fn policies_that_do_not_apply_are_located_errors() {
    for example in ["pipeline", "rl_step"] {
        let forward_only = pw_opt(
            &[&program(example), "--pw-lower=devices=8 schedule=gpipe"],
            b"",
        );
        assert_eq!(forward_only.code, 0, "{}", forward_only.stderr);
    }
    let none = "no computation is called more than once on a mesh";
    for (example, policy, why) in [
        ("pipeline", "1f1b", "it needs a backward pass"),
        ("rl_step", "1f1b", "it needs a backward pass"),
        ("partially_placed", "gpipe", none),
        ("partially_placed", "1f1b", none),
    ] {
        let out = pw_opt(
            &[
                &program(example),
                &format!("--pw-lower=devices=8 schedule={policy}"),
            ],
            b"",
        );
        assert_eq!(out.code, 1, "{example} {policy}: {}", out.stdout);
        assert!(
            out.stderr.contains(&format!("{example}.mlir:"))
                && out.stderr.contains(&format!(
                    "error: pw-schedule{{policy={policy}}} cannot order this program: {why}"
                )),
            "{example} {policy}: {}",
            out.stderr
        );
    }
}
