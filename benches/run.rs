//! pw-run's benchmarks, in one run, as one table (not a timed test):
//!
//! a. dispatch overhead: a chain of 1,000 tiny computations alternating
//!    between two devices, and the same chain on one device: pw's
//!    steady-state time per node (compilation excluded) next to JAX's
//!    (`jax.jit` + `jax.device_put` loop, after warm-up) on this machine;
//! b. run-ahead: for the pipeline example, when the host had enqueued
//!    everything vs when the last output was ready;
//! c. pipeline throughput: the 3-stage pipeline with 8 microbatches, its
//!    wall time vs the critical-path bound `Σ stage + (M-1)·max stage` from
//!    single-node times measured alone.
//!
//!     cargo bench -p pw-benches --bench run
//!
//! Uses the CPU plugin of the project venv (or `PW_PJRT_PLUGIN`) with 4
//! devices, and the venv's JAX.

use pw_benches::{fail, pipeline_program};
use pw_compiler::{LowerOptions, Pipeline, RunOptions, Timings};
use pw_core::plan::{Plan, StepKind};
use pw_core::DType;
use pw_exec::{self as exec, cache::Executables, Executor, HostArray, RunReport};
use pw_pjrt::Client;
use pw_tests::chain_program;
use std::{path::Path, process::Command, time::Duration, time::Instant};

const NODES: usize = 1000;
const RUNS: usize = 7;

/// Lowers program text onto devices `0..devices` (one island) into a plan.
fn lowered(text: &str, devices: i64) -> Plan {
    let context = pw_dialect::new_context();
    let module = pw_dialect::parse_source(&context, text, "bench")
        .unwrap_or_else(|| fail("program does not parse"));
    let topology = pw_core::Topology::local(devices, "cpu").unwrap_or_else(|e| fail(e));
    let analysis = pw_compiler::run(
        &context,
        &module,
        &Pipeline::lower(&LowerOptions {
            topology,
            ..Default::default()
        }),
        &mut RunOptions::default(),
        &mut Timings::default(),
    )
    .unwrap_or_else(|_| fail("lowering failed"));
    pw_compiler::export::to_plan(&analysis)
        .unwrap_or_else(|e| fail(e.first().map_or(String::new(), |e| e.error.to_string())))
}

fn random_inputs(plan: &Plan) -> Vec<HostArray> {
    plan.inputs
        .iter()
        .map(|&id| {
            let v = &plan.values[id];
            let shape: Vec<usize> = v.shape.iter().map(|&d| d as usize).collect();
            let n: usize = shape.iter().product();
            match v.dtype {
                DType::F32 => HostArray::from_slice(
                    &shape,
                    &(0..n).map(|i| (i % 7) as f32 * 0.1).collect::<Vec<_>>(),
                ),
                other => Ok(HostArray::zeros(other, &shape)),
            }
            .unwrap_or_else(|e| fail(e))
        })
        .collect()
}

/// Compiles `plan` (outside the measurement), warms up, then runs `RUNS`
/// times in process; returns (median wall time, the report of the median
/// run). Completion times are recorded when `record`.
fn measure(
    client: &Client,
    plan: &Plan,
    inputs: &[HostArray],
    record: bool,
) -> (Duration, RunReport) {
    let mut cache = Executables::new(client, None);
    let prepared = exec::prepare(plan, &mut cache, &mut |_| {}).unwrap_or_else(|e| fail(e));
    let executor = Executor::new(client);
    let run =
        || exec::run_local(&executor, &prepared, inputs, None, record).unwrap_or_else(|e| fail(e));
    for _ in 0..2 {
        run();
    }
    let mut runs: Vec<(Duration, RunReport)> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let (_, report) = run();
            (start.elapsed(), report)
        })
        .collect();
    runs.sort_by_key(|(d, _)| *d);
    runs.swap_remove(RUNS / 2)
}

fn us(d: Duration, per: usize) -> f64 {
    d.as_secs_f64() * 1e6 / per as f64
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The median time from enqueueing a lone call of each computation of
/// `plan` to its outputs being ready, on a mesh of the same shape.
fn single_node_times(plan: &Plan) -> Vec<(String, Duration)> {
    let plugin_client = pw_benches::pjrt_client(Some(4));
    let mut times = Vec::new();
    for (index, computation) in plan.computations.iter().enumerate() {
        let Some(StepKind::Call { args, .. }) = plan
            .steps
            .iter()
            .map(|s| &s.kind)
            .find(|k| matches!(k, StepKind::Call { computation, .. } if *computation == index))
        else {
            continue;
        };
        let pw_core::plan::Module::Text(body) = &computation.module else {
            continue;
        };
        let mesh = &plan.values[args[0]].mesh;
        let axes = plan
            .meshes
            .iter()
            .find(|m| &m.name == mesh)
            .map(|m| m.axes.clone())
            .unwrap_or_default();
        let types: Vec<String> = args.iter().map(|&a| array_type(plan, a, "")).collect();
        let params: Vec<String> = types
            .iter()
            .enumerate()
            .map(|(i, t)| format!("%a{i}: {t}"))
            .collect();
        let operands: Vec<String> = (0..types.len()).map(|i| format!("%a{i}")).collect();
        let outputs = outputs_of(plan, index);
        let results: Vec<String> = (0..outputs).map(|i| format!("%r#{i}")).collect();
        let result_types = result_types(plan, index);
        // Returning the results keeps the call from being removed as dead.
        let text = format!(
            "module {{\n  pw.mesh @m {axes}\n{}\n  func.func @main({}) -> ({result_types}) {{\n    %r:{outputs} = pw.call @{}({}) on @m : ({}) -> ({result_types})\n    return {} : {result_types}\n  }}\n}}\n",
            body,
            params.join(", "),
            computation.name,
            operands.join(", "),
            types.join(", "),
            results.join(", "),
        );
        let alone = lowered(&text, 4);
        let inputs = random_inputs(&alone);
        let (_, report) = measure(&plugin_client, &alone, &inputs, true);
        let call = report.steps.last().cloned().unwrap_or_default();
        let done = call
            .done
            .iter()
            .filter_map(|(_, d)| *d)
            .max()
            .unwrap_or(call.enqueue_end);
        times.push((
            computation.name.clone(),
            done.saturating_sub(call.enqueue_start),
        ));
    }
    times
}

/// `!pw.array<...>` of value `id`, with `placement` (e.g. `, @m`) appended.
fn array_type(plan: &Plan, id: usize, placement: &str) -> String {
    let v = &plan.values[id];
    let dims: String = v.shape.iter().map(|d| format!("{d}x")).collect();
    format!("!pw.array<{dims}{}{placement}>", v.dtype.mlir_name())
}

fn outputs_of(plan: &Plan, computation: usize) -> usize {
    plan.steps
        .iter()
        .find_map(|s| match &s.kind {
            StepKind::Call {
                computation: c,
                results,
                ..
            } if *c == computation => Some(results.len()),
            _ => None,
        })
        .unwrap_or(1)
}

fn result_types(plan: &Plan, computation: usize) -> String {
    plan.steps
        .iter()
        .find_map(|s| match &s.kind {
            StepKind::Call {
                computation: c,
                results,
                ..
            } if *c == computation => Some(
                results
                    .iter()
                    .map(|&r| array_type(plan, r, ", @m"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

fn jax_chain(root: &Path) -> serde_json::Value {
    let python = pw_benches::python(root);
    let out = Command::new(&python)
        .arg(root.join("benches/jax_chain.py"))
        .args(["--nodes", &NODES.to_string()])
        .output()
        .unwrap_or_else(|e| fail(format!("cannot run {}: {e}", python.display())));
    if !out.status.success() {
        fail(String::from_utf8_lossy(&out.stderr));
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| fail(e))
}

fn main() {
    let root = pw_benches::root();
    let client = pw_benches::pjrt_client(Some(4));
    let mut rows: Vec<[String; 3]> = Vec::new();

    eprintln!("a. dispatch overhead...");
    let jax = jax_chain(&root);
    for (name, alternate, key) in [
        ("alternating between 2 devices", true, "alternating"),
        ("on 1 device", false, "single"),
    ] {
        let p = lowered(
            &chain_program(NODES, |i| if alternate && i % 2 == 1 { "b" } else { "a" }),
            2,
        );
        let (wall, report) = measure(&client, &p, &random_inputs(&p), false);
        rows.push([
            format!("a. chain of {NODES} tiny calls {name}: time per node"),
            format!(
                "{:.1} µs (host enqueue {:.1} µs)",
                us(wall, NODES),
                us(report.enqueued, NODES)
            ),
            format!("{:.1} µs", jax[key].as_f64().unwrap_or(f64::NAN)),
        ]);
    }

    eprintln!("b. run-ahead...");
    let text =
        std::fs::read_to_string(root.join("examples/pipeline.mlir")).unwrap_or_else(|e| fail(e));
    let p = lowered(&text, 4);
    let (_, report) = measure(&client, &p, &random_inputs(&p), false);
    rows.push([
        format!(
            "b. pipeline example ({} steps): host done enqueuing / last output ready",
            p.steps.len()
        ),
        format!("{} / {}", ms(report.enqueued), ms(report.outputs_ready)),
        "-".into(),
    ]);

    eprintln!("b, c. wider pipelines...");
    for (what, width_batch) in [
        ("example sizes", None),
        ("layers 256-512-512-256, 64 rows", Some((256, 64))),
    ] {
        let p = lowered(&pipeline_program(&root, 8, width_batch), 4);
        let (_, report) = measure(&client, &p, &random_inputs(&p), false);
        if width_batch.is_some() {
            rows.push([
                format!("b. the pipeline with {what}, 8 microbatches ({} steps): host done enqueuing / last output ready", p.steps.len()),
                format!("{} / {}", ms(report.enqueued), ms(report.outputs_ready)),
                "-".into(),
            ]);
        }
        let stages = single_node_times(&p);
        let sum: Duration = stages.iter().map(|(_, d)| *d).sum();
        let max = stages.iter().map(|(_, d)| *d).max().unwrap_or_default();
        let bound = sum + max * 7;
        let stage_text: Vec<String> = stages
            .iter()
            .map(|(n, d)| format!("@{n} {:.0} µs", us(*d, 1)))
            .collect();
        rows.push([
            format!(
                "c. 3-stage pipeline ({what}), 8 microbatches: wall time vs critical-path bound"
            ),
            format!(
                "{} vs {} ({:.2}x the bound; alone: {})",
                ms(report.outputs_ready),
                ms(bound),
                report.outputs_ready.as_secs_f64() / bound.as_secs_f64().max(1e-12),
                stage_text.join(", ")
            ),
            "-".into(),
        ]);
    }

    println!(
        "pw-run benchmarks (CPU plugin, 4 devices; JAX {} on the same machine, same run)\n",
        jax["jax"].as_str().unwrap_or("?")
    );
    println!("| benchmark | pw | JAX |");
    println!("| --- | --- | --- |");
    for [a, b, c] in rows {
        println!("| {a} | {b} | {c} |");
    }
}
