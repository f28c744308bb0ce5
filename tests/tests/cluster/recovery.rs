//! Recovery: a worker lost mid-run (killed with SIGKILL from outside,
//! hung with SIGSTOP, cut off by a link taken down) and the program still
//! finishes with JAX's outputs, with no user code: the lost devices move
//! onto a spare or onto a worker that registers meanwhile (a restarted
//! pod), and only the lost part of the DAG runs again (checkpoints, the
//! values sent between workers, bound it); a worker lost while the inputs
//! are put is a loss like any other. Without capacity
//! the run fails within the bounded wait, naming what was lost, and
//! nothing leaks.
//!
//! The kill points are drawn from a seeded generator; the seed is printed
//! (set PW_RECOVERY_SEED to replay a failure).

use crate::harness::{
    assert_matches, example_args, faulty_cluster, long_pipeline, serial, Cluster, Place, Proc,
};
use std::time::{Duration, Instant};

const EXAMPLES: [&str; 4] = ["pipeline", "rl_step", "partially_placed", "pipeline_train"];

/// A small seeded generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn from_env() -> Rng {
        let seed = std::env::var("PW_RECOVERY_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20_261_201);
        eprintln!("recovery tests: seed {seed} (PW_RECOVERY_SEED)");
        Rng(seed)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % bound.max(1)
    }
}

/// The run finished, matched JAX's outputs and reports a recovery from
/// losing worker `lost`; returns its stdout and stderr.
pub fn recovered(c: &Cluster, run: &mut Proc, lost: u32) -> (String, String) {
    let status = run.wait_exit(Duration::from_secs(120));
    let (stdout, stderr) = (run.stdout_text(), run.stderr_text());
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "{stdout}\n{stderr}\n{}",
        c.logs()
    );
    assert!(
        stdout.contains("matches") && !stdout.contains("MISMATCH"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recovery"))
        .unwrap_or_else(|| panic!("no recovery reported:\n{stdout}\n{stderr}"));
    assert!(
        line.contains(&format!("lost worker {lost} (")) && line.contains("recovered at"),
        "{line}"
    );
    (stdout, stderr)
}

/// Three 2-device workers; worker `victim` pauses 3 s before the step at
/// position `at` of its part; it is killed (SIGKILL) `after` into the
/// run, and a new worker registers, as a restarted pod would. Returns
/// pw-run's stdout.
fn kill_mid_run(args: &[String], victim: usize, at: u64, after: Duration) -> String {
    let mut c = faulty_cluster(&[], victim, &format!("delay-step=@{at}:3000"));
    let mut run = c.spawn_pw_run(args);
    c.wait_run_started(victim as u32);
    std::thread::sleep(after);
    c.workers[victim].signal("KILL");
    c.add_worker(2, &[], &[], &Place::default());
    let (stdout, _) = recovered(&c, &mut run, victim as u32);
    c.assert_no_buffers();
    stdout
}

#[test]
fn every_example_recovers_from_a_worker_killed_at_a_random_point() {
    let _serial = serial();
    let mut rng = Rng::from_env();
    let started = Instant::now();
    let mut runs = 0;
    for round in 0..5 {
        for example in EXAMPLES {
            let victim = rng.below(3) as usize;
            let at = rng.below(4);
            let after = Duration::from_millis(rng.below(800));
            eprintln!("{example}: worker {victim} killed {after:?} into the run, pausing before its step @{at}");
            let stdout = kill_mid_run(&example_args(example), victim, at, after);
            if round == 0 {
                eprintln!(
                    "{}",
                    stdout
                        .lines()
                        .find(|l| l.starts_with("recovery"))
                        .unwrap_or_default()
                );
            }
            runs += 1;
        }
    }
    eprintln!(
        "{runs} runs recovered in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The steps a recovery line says were replayed.
fn replayed(stdout: &str) -> usize {
    stdout
        .lines()
        .find(|l| l.starts_with("recovery"))
        .and_then(|l| l.split("replayed ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no replay count in {stdout}"))
}

/// The last stage of the long pipeline is killed once the stages before
/// it have done all they can: with checkpoints (the values they sent it,
/// kept at their senders) only the last stage's steps run again; without
/// them (`--checkpoint-mb 0`) the replay reaches back into the earlier
/// stages.
#[test]
fn checkpoints_bound_the_replay_to_what_was_lost() {
    let _serial = serial();
    let args = long_pipeline();
    let mut counts = Vec::new();
    for server_args in [&[][..], &["--checkpoint-mb", "0"][..]] {
        let mut c = faulty_cluster(server_args, 2, "delay-step=@8:4000");
        let mut run = c.spawn_pw_run(&args);
        c.wait_run_started(2);
        std::thread::sleep(Duration::from_millis(1500));
        c.workers[2].signal("KILL");
        c.add_worker(2, &[], &[], &Place::default());
        let (stdout, _) = recovered(&c, &mut run, 2);
        counts.push(replayed(&stdout));
        c.assert_no_buffers();
    }
    eprintln!("steps replayed with checkpoints and without: {counts:?}");
    // Stage 2's share of the 576 steps: a copy in, a call and an assembly
    // per microbatch and shard.
    assert!(counts[0] <= 256, "{counts:?}");
    assert!(counts[0] < counts[1], "{counts:?}");
}

/// A worker that dies as the run's inputs are put on it (before its part
/// was sent, and before the controller noticed) is a loss like any other:
/// the run recovers onto a spare and gives JAX's outputs.
#[test]
fn a_worker_lost_while_the_inputs_are_put_is_recovered() {
    let _serial = serial();
    let mut c = faulty_cluster(&[], 1, "exit-on-put");
    c.add_worker(2, &[], &[], &Place::default());
    c.wait_for_workers(4);
    let mut run = c.spawn_pw_run(&long_pipeline());
    recovered(&c, &mut run, 1);
    c.assert_no_buffers();
}

#[test]
fn a_long_pipeline_recovers_from_a_kill_at_a_random_time() {
    let _serial = serial();
    let mut rng = Rng::from_env();
    let args = long_pipeline();
    for _ in 0..2 {
        let victim = rng.below(3) as usize;
        let after = Duration::from_millis(100 + rng.below(700));
        eprintln!("long pipeline: worker {victim} killed {after:?} into the run");
        let mut c = Cluster::start(3, 2);
        let mut run = c.spawn_pw_run(&args);
        c.wait_run_started(victim as u32);
        std::thread::sleep(after);
        c.workers[victim].signal("KILL");
        c.add_worker(2, &[], &[], &Place::default());
        let status = run.wait_exit(Duration::from_secs(120));
        let stdout = run.stdout_text();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "{stdout}\n{}\n{}",
            run.stderr_text(),
            c.logs()
        );
        assert!(
            stdout.contains("matches") && !stdout.contains("MISMATCH"),
            "{stdout}"
        );
        // A run done before the kill needs no recovery; one under way
        // reports it.
        if let Some(line) = stdout.lines().find(|l| l.starts_with("recovery")) {
            eprintln!("{line}");
            assert!(line.contains(&format!("lost worker {victim} (")), "{line}");
        }
        c.assert_no_buffers();
    }
}

#[test]
fn what_survivors_finished_is_kept() {
    let _serial = serial();
    // The reward model's worker dies: the trainer's worker keeps the
    // sampler's results it received, so they are neither sent nor
    // assembled again, and fewer steps run again than the plan has.
    let trace = std::env::temp_dir().join(format!("pw-recovery-trace-{}.json", std::process::id()));
    let mut args = example_args("rl_step");
    args.extend([
        "--stats".into(),
        "--trace".into(),
        trace.display().to_string(),
    ]);
    let stdout = kill_mid_run(&args, 1, 1, Duration::from_millis(300));
    // The summary, --stats and the trace all report it.
    assert!(
        stdout.lines().filter(|l| l.starts_with("recovery")).count() >= 2,
        "the summary and --stats both have the recovery line: {stdout}"
    );
    let json = std::fs::read_to_string(&trace).expect("trace");
    let _ = std::fs::remove_file(&trace);
    assert!(
        json.contains("controller: recoveries") && json.contains("recovery: lost worker 1 ("),
        "{json}"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recovery"))
        .unwrap_or_default();
    let numbers: Vec<usize> = line
        .split("replayed ")
        .nth(1)
        .and_then(|rest| rest.split(" steps").next())
        .map(|t| t.split(" of ").filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    assert!(
        numbers.len() == 2 && numbers[0] < numbers[1],
        "every step ran again: {line}"
    );
    assert!(!line.contains("kept 0 values"), "{line}");
}

#[test]
fn a_hung_worker_is_replaced_by_a_spare_and_its_late_messages_are_ignored() {
    let _serial = serial();
    let mut c = faulty_cluster(&[], 1, "delay-step=@3:4000");
    // The spare: the pipeline's three meshes take the first three workers.
    c.add_worker(2, &[], &[], &Place::default());
    c.wait_for_workers(4);
    let mut run = c.spawn_pw_run(&example_args("pipeline"));
    c.wait_run_started(1);
    let stopped = Instant::now();
    c.workers[1].signal("STOP");
    let (stdout, _) = recovered(&c, &mut run, 1);
    eprintln!(
        "SIGSTOP to the end of the recovered run: {:?}",
        stopped.elapsed()
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recovery"))
        .unwrap_or_default();
    assert!(
        line.contains("2->6, 3->7"),
        "not moved onto the spare: {line}"
    );
    let counters = c.status().counters.unwrap_or_default();
    assert_eq!(
        (counters.runs_ok, counters.runs_recovered),
        (1, 1),
        "{counters:?}"
    );
    // The hung worker wakes up: what it still sends of the old run is
    // refused, it registers again as a new worker, and the next run is
    // right.
    c.workers[1].signal("CONT");
    c.wait_for_workers(4);
    assert_matches(&c.pw_run(&example_args("pipeline"), &Place::default()));
    c.assert_no_buffers();
}

#[test]
fn without_capacity_the_run_fails_in_the_bounded_wait_then_a_new_worker_serves() {
    let _serial = serial();
    let mut c = faulty_cluster(&["--capacity-wait-ms", "1500"], 1, "delay-step=@2:3000");
    let mut run = c.spawn_pw_run(&example_args("pipeline"));
    c.wait_run_started(1);
    let killed = Instant::now();
    c.workers[1].signal("KILL");
    let status = run.wait_exit(Duration::from_secs(30));
    let took = killed.elapsed();
    let stderr = run.stderr_text();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{stderr}");
    assert!(
        took < Duration::from_secs(10),
        "failed {took:?} after the kill: {stderr}"
    );
    for wanted in [
        "worker 1 (",
        "was lost",
        "cannot recover",
        "no healthy worker has 2 free cpu devices",
        "waited 1.",
        "lost: output value",
    ] {
        assert!(stderr.contains(wanted), "{wanted:?} not in: {stderr}");
    }
    c.assert_no_buffers();
    c.add_worker(2, &[], &[], &Place::default());
    c.wait_for_workers(3);
    assert_matches(&c.pw_run(&example_args("pipeline"), &Place::default()));
}
