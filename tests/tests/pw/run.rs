//! pw-run on the CPU plugin: every example gives JAX's outputs; bad
//! requests fail with exit code 1 and a clear error; nothing is leaked.

use pw_exec::{self as exec, cache::Executables, npy, Executor};
use pw_pjrt::{Client, ClientOptions, Plugin};
use pw_tests::repo_root;
use std::{ffi::OsString, panic::AssertUnwindSafe, path::PathBuf};

use crate::common::{pw_opt, Output};

/// Runs `pw-run ARGS` in-process with `stdin`.
pub(crate) fn pw_run(args: &[&str], stdin: &[u8]) -> Output {
    let mut argv: Vec<OsString> = vec!["pw-run".into()];
    argv.extend(args.iter().map(OsString::from));
    let mut input = stdin;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = std::panic::catch_unwind(AssertUnwindSafe(|| {
        pw_tools::run::main(argv, &mut input, &mut stdout, &mut stderr)
    }))
    .unwrap_or_else(|_| panic!("pw-run {args:?} panicked"));
    Output {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

pub(crate) fn files(example: &str, prefix: &str) -> Vec<String> {
    let dir = repo_root().join("examples").join(example);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("example data")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    // input_10 sorts after input_9.
    found.sort_by_key(|p| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.rsplit('_').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    });
    found.iter().map(|p| p.display().to_string()).collect()
}

pub(crate) fn program(example: &str) -> String {
    repo_root()
        .join("examples")
        .join(format!("{example}.mlir"))
        .display()
        .to_string()
}

pub(crate) fn run_example(example: &str, extra: &[&str]) -> Output {
    let mut args = vec![program(example)];
    args.extend(files(example, "input_"));
    args.push("--expect".into());
    args.extend(files(example, "expected_"));
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pw_run(&args, b"")
}

const EXAMPLES: [&str; 5] = [
    "pipeline",
    "rl_step",
    "partially_placed",
    "pipeline_train",
    "rl_loop",
];

#[test]
fn examples_match_jax_on_four_devices() {
    for example in EXAMPLES {
        let out = run_example(example, &["--devices", "4"]);
        assert_eq!(out.code, 0, "{example}:\n{}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("matches"), "{example}: {}", out.stdout);
        assert!(
            !out.stdout.contains("MISMATCH"),
            "{example}: {}",
            out.stdout
        );
    }
}

#[test]
fn examples_match_jax_on_eight_devices() {
    for example in EXAMPLES {
        let out = run_example(example, &["--devices", "8", "-q"]);
        assert_eq!(out.code, 0, "{example}:\n{}", out.stderr);
    }
}

#[test]
fn a_lowered_program_runs_as_it_is() {
    let text = std::fs::read_to_string(program("pipeline")).expect("example");
    let lowered = pw_opt(&["-", "--pw-lower=devices=4"], text.as_bytes());
    assert_eq!(lowered.code, 0, "{}", lowered.stderr);
    let mut args = vec!["-".to_owned()];
    args.extend(files("pipeline", "input_"));
    args.push("--expect".into());
    args.extend(files("pipeline", "expected_"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = pw_run(&args, lowered.stdout.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("lowered    already"), "{}", out.stdout);
}

#[test]
fn a_mismatch_fails_the_run() {
    let mut args = vec![program("pipeline")];
    args.extend(files("pipeline", "input_"));
    args.push("--expect".into());
    // Every output compared with the first microbatch's expected output.
    args.extend(std::iter::repeat_n(
        files("pipeline", "expected_")[0].clone(),
        4,
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = pw_run(&args, b"");
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("MISMATCH"), "{}", out.stdout);
}

const TOO_BIG: &str = r#"
module {
  pw.mesh @huge ["x"=16]
  module @f attributes {mhlo.num_partitions = 16 : i32} {
    func.func public @main(%x: tensor<16xf32>) -> tensor<16xf32> {
      return %x : tensor<16xf32>
    }
  }
  func.func @main(%x: !pw.array<16xf32>) -> !pw.array<16xf32, @huge> {
    %0 = pw.call @f(%x) on @huge : (!pw.array<16xf32>) -> !pw.array<16xf32, @huge>
    return %0 : !pw.array<16xf32, @huge>
  }
}
"#;

#[test]
fn more_devices_than_exist_is_refused() {
    let out = pw_run(
        &["-", "--random-inputs", "--devices", "4"],
        TOO_BIG.as_bytes(),
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("mesh @huge needs 16 devices on one island; the largest such island has 4"),
        "{}",
        out.stderr
    );
    // A program lowered for a bigger machine is refused too.
    let lowered = pw_opt(&["-", "--pw-lower=devices=16"], TOO_BIG.as_bytes());
    assert_eq!(lowered.code, 0, "{}", lowered.stderr);
    let out = pw_run(
        &["-", "--random-inputs", "--devices", "4"],
        lowered.stdout.as_bytes(),
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("is bound to device 4, but the PJRT client offers devices [0, 1, 2, 3]"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_inputs_are_refused() {
    let inputs = files("pipeline", "input_");
    let p = program("pipeline");
    let mut missing = inputs.clone();
    missing[3] = "/nonexistent/x.npy".into();
    let mut swapped = inputs.clone();
    swapped.swap(0, 4);
    let dir = std::env::temp_dir().join(format!("pw-run-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let int_input = dir.join("ints.npy");
    let host = npy::read(&inputs[0]).expect("input");
    let ints = pw_exec::HostArray::zeros(pw_core::DType::I32, host.shape());
    npy::write(&int_input, &ints).expect("write");
    let mut wrong_dtype = inputs.clone();
    wrong_dtype[0] = int_input.display().to_string();
    for (case, args, message) in [
        ("missing file", missing, "error: input #3"),
        ("wrong shape", swapped, "error: input #0"),
        (
            "wrong dtype",
            wrong_dtype,
            "is int32[8, 16], but the program expects float32[8, 16]",
        ),
        (
            "too few",
            inputs[..3].to_vec(),
            "the program takes 10 inputs, 3 given",
        ),
    ] {
        let mut all = vec![p.clone()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = pw_run(&all, b"");
        assert_eq!(out.code, 1, "{case}");
        assert!(out.stderr.contains(message), "{case}: {}", out.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plugin_and_program_errors_are_reported() {
    let out = pw_run(
        &[
            &program("pipeline"),
            "--random-inputs",
            "--plugin",
            "/nonexistent/plugin.so",
        ],
        b"",
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("PJRT plugin not found"),
        "{}",
        out.stderr
    );
    let out = pw_run(&["-", "--random-inputs"], b"not a program");
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("error:"), "{}", out.stderr);
    let bad = TOO_BIG
        .replace("[\"x\"=16]", "[\"x\"=2]")
        .replace("16 : i32", "2 : i32")
        .replace("return %x : tensor<16xf32>", "%0 = \"stablehlo.frobnicate\"(%x) : (tensor<16xf32>) -> tensor<16xf32>\n      return %0 : tensor<16xf32>");
    let out = pw_run(&["-", "--random-inputs"], bad.as_bytes());
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("compiling @f for devices [0, 1] failed"),
        "{}",
        out.stderr
    );
}

#[test]
fn random_inputs_are_deterministic_and_outputs_written() {
    let dir = std::env::temp_dir().join(format!("pw-run-random-{}", std::process::id()));
    let read = |sub: &str| {
        let out = pw_run(
            &[
                &program("rl_step"),
                "--random-inputs",
                "--seed",
                "3",
                "-q",
                "--out-dir",
                dir.join(sub).to_str().unwrap_or(""),
            ],
            b"",
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        (0..3)
            .map(|i| {
                std::fs::read(dir.join(sub).join(format!("output_{i}.npy")))
                    .expect("output written")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(read("a"), read("b"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_and_stats() {
    let dir = std::env::temp_dir().join(format!("pw-run-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let trace = dir.join("run.json");
    let out = run_example(
        "pipeline",
        &["--trace", trace.to_str().unwrap_or(""), "--stats"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("pw.call @jit_mlp_layer on @stage0"),
        "{}",
        out.stdout
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).expect("trace")).expect("JSON");
    let events = json["traceEvents"].as_array().expect("events");
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    for track in ["compiler", "host (enqueue)", "device 0", "device 1"] {
        assert!(names.contains(&track), "no track {track} in {names:?}");
    }
    assert!(events.iter().any(|e| e["cat"] == "execute"));
    assert!(events.iter().any(|e| e["cat"] == "transfer"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_buffer_outlives_a_run() {
    let text = std::fs::read_to_string(program("pipeline")).expect("example");
    let lowered = pw_opt(&["-", "--pw-lower=devices=4"], text.as_bytes());
    let context = pw_dialect::new_context();
    let module = pw_dialect::parse_source(&context, &lowered.stdout, "lowered").expect("parses");
    let analysis = pw_dialect::verify::verify(&module).expect("valid");
    let plan = pw_compiler::export::to_plan(&analysis).expect("plan");
    let plugin = Plugin::discover().expect("the CPU plugin (scripts/setup.sh installs it)");
    let client = Client::new(&plugin, &ClientOptions::new().cpu_device_count(4)).expect("client");
    let inputs: Vec<_> = files("pipeline", "input_")
        .iter()
        .map(|f| npy::read(f).expect("input"))
        .collect();
    let mut cache = Executables::new(&client, None);
    let prepared = exec::prepare(&plan, &mut cache, &mut |_| {}).expect("prepare");
    let executor = Executor::new(&client);
    let (outputs, report) =
        exec::run_local(&executor, &prepared, &inputs, None, true).expect("run");
    assert_eq!(outputs.len(), 4);
    assert!(report.enqueued <= report.outputs_ready);
    assert_eq!(client.live().buffers, 0, "buffers left alive after the run");
    drop((prepared, cache, executor));
    assert_eq!(client.live().executables, 0, "executables left alive");
}

const DONATING: &str = r#"
module {
  pw.mesh @m []
  module @inc attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
      %c = "stablehlo.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<4xf32>
      %0 = "stablehlo.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @dbl attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  func.func @main(%x: !pw.array<4xf32>) -> (!pw.array<4xf32, @m>, !pw.array<4xf32, @m>, !pw.array<4xf32>) {
    %0 = pw.call @inc(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    %1 = pw.call @dbl(%x) on @m : (!pw.array<4xf32>) -> !pw.array<4xf32, @m>
    %2 = pw.call @inc(%1) on @m : (!pw.array<4xf32, @m>) -> !pw.array<4xf32, @m>
    return %0, %2, %x : !pw.array<4xf32, @m>, !pw.array<4xf32, @m>, !pw.array<4xf32>
  }
}
"#;

/// `@inc` donates its argument. The program input is read again (by
/// `@dbl`, and as an output), so it must not be donated; `%1` is read once,
/// by `@inc`, and may be. Either mistake shows in the values.
#[test]
fn donation_never_clobbers_a_live_array() {
    let dir = std::env::temp_dir().join(format!("pw-run-donate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let write = |name: &str, values: [f32; 4]| {
        let path = dir.join(name);
        let host = pw_exec::HostArray::from_slice(&[4], &values).expect("host array");
        npy::write(&path, &host).expect("write");
        path.display().to_string()
    };
    let x = write("x.npy", [1.0, 2.0, 3.0, 4.0]);
    let plus_one = write("plus_one.npy", [2.0, 3.0, 4.0, 5.0]);
    let twice_plus_one = write("twice_plus_one.npy", [3.0, 5.0, 7.0, 9.0]);
    let out = pw_run(
        &["-", &x, "--expect", &plus_one, &twice_plus_one, &x],
        DONATING.as_bytes(),
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scratch directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pw-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A NaN or infinite tolerance made every `--expect` comparison pass.
#[test]
fn tolerances_must_be_finite() {
    let mut args = vec![program("pipeline")];
    args.extend(files("pipeline", "input_"));
    args.push("--expect".into());
    args.extend(files("pipeline", "expected_"));
    for (flag, value) in [
        ("--rtol", "nan"),
        ("--atol", "NaN"),
        ("--rtol", "inf"),
        ("--atol", "-1"),
    ] {
        let mut all = args.clone();
        all.push(format!("{flag}={value}"));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = pw_run(&all, b"");
        assert_eq!(out.code, 1, "{flag} {value}");
        assert!(
            out.stderr.contains("is not a finite tolerance >= 0"),
            "{flag} {value}: {}",
            out.stderr
        );
    }
}

/// `--devices` and `--random-inputs` are bounded before the plugin or the
/// host allocates anything for them.
#[test]
fn device_counts_and_random_inputs_are_bounded() {
    for n in ["0", "100000"] {
        let out = pw_run(
            &[&program("pipeline"), "--random-inputs", "--devices", n],
            b"",
        );
        assert_eq!(out.code, 1, "--devices {n}");
        assert!(
            out.stderr.contains("--devices"),
            "--devices {n}: {}",
            out.stderr
        );
    }
    let huge = r#"
module {
  pw.mesh @m []
  module @f attributes {mhlo.num_partitions = 1 : i32} {
    func.func public @main(%x: tensor<1000000x1000000xf32>) -> tensor<1000000x1000000xf32> {
      return %x : tensor<1000000x1000000xf32>
    }
  }
  func.func @main(%x: !pw.array<1000000x1000000xf32, @m>) -> !pw.array<1000000x1000000xf32, @m> {
    %0 = pw.call @f(%x) on @m : (!pw.array<1000000x1000000xf32, @m>) -> !pw.array<1000000x1000000xf32, @m>
    return %0 : !pw.array<1000000x1000000xf32, @m>
  }
}
"#;
    let out = pw_run(&["-", "--random-inputs"], huge.as_bytes());
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("input #0 is float32[1000000, 1000000]: --random-inputs makes at most 4 GiB"),
        "{}",
        out.stderr
    );
}

/// `--out-dir` writes every output or none, and names the path it could
/// not write.
#[test]
fn outputs_are_all_or_nothing() {
    let dir = scratch("outputs");
    // output_2.npy cannot be a file: it is a directory.
    std::fs::create_dir_all(dir.join("output_2.npy").join("taken")).expect("blocker");
    let mut args = vec![program("pipeline")];
    args.extend(files("pipeline", "input_"));
    args.extend([
        "--out-dir".to_owned(),
        dir.display().to_string(),
        "-q".to_owned(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = pw_run(&args, b"");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("{}", dir.join("output_2.npy").display())),
        "{}",
        out.stderr
    );
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["output_2.npy"], "files left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An array with no elements, sharded over one mesh and sent to another,
/// lowers and runs (lowering once called the result an invalid program).
#[test]
fn arrays_without_elements_move() {
    let dir = scratch("empty");
    let input = dir.join("empty.npy");
    npy::write(
        &input,
        &pw_exec::HostArray::zeros(pw_core::DType::F32, &[0, 4]),
    )
    .expect("write");
    let text = r#"
module {
  pw.mesh @a ["x"=2]
  pw.mesh @b ["x"=2]
  func.func @main(%x: !pw.array<0x4xf32, @a, [{}, {"x"}]>) -> !pw.array<0x4xf32, @b, [{"x"}, {}]> {
    %0 = pw.transfer %x : !pw.array<0x4xf32, @a, [{}, {"x"}]> -> !pw.array<0x4xf32, @b, [{"x"}, {}]>
    return %0 : !pw.array<0x4xf32, @b, [{"x"}, {}]>
  }
}
"#;
    let input = input.display().to_string();
    let out = pw_run(
        &["-", &input, "--devices", "4", "--expect", &input],
        text.as_bytes(),
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("#0: matches"), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lowered program whose call hands its computation shards in another
/// layout than the computation declares: the verifier once trusted it, and
/// pw-run returned the array with its off-diagonal blocks swapped.
#[test]
fn layouts_must_agree_with_the_computation() {
    let text = r#"
module {
  pw.mesh @m ["x"=2, "y"=2] {devices = array<i64: 0, 1, 2, 3>}
  module @gather attributes {mhlo.num_partitions = 4 : i32} {
    "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2]>, sym_name = "mesh"}> : () -> ()
    func.func public @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
      return %a : tensor<4x4xf32>
    }
  }
  func.func @main(%x: !pw.array<4x4xf32, @m, [{"y"}, {"x"}]>) -> !pw.array<4x4xf32, @m, [{}, {}]> {
    %0 = pw.call @gather(%x) on @m {in_shardings = [[["y"], ["x"]]]} : (!pw.array<4x4xf32, @m, [{"y"}, {"x"}]>) -> !pw.array<4x4xf32, @m, [{}, {}]>
    return %0 : !pw.array<4x4xf32, @m, [{}, {}]>
  }
}
"#;
    let out = pw_run(&["-", "--random-inputs", "--devices", "4"], text.as_bytes());
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            "in_shardings #0 is [{\"y\"}, {\"x\"}] but computation @gather takes argument #0 as [{\"x\"}, {\"y\"}]"
        ),
        "{}",
        out.stderr
    );
}
