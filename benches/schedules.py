"""Pipeline schedules: bubbles and memory per policy, measured and predicted.

Usage, from the repository root (needs target/{release,debug}/pw-run and
pw-opt):

    .venv/bin/python benches/schedules.py [--microbatches M] [--runs N]

The training step of examples/pipeline_train (forward, backward with
jax.vjp, gradient sums and SGD per stage), with p = 2 stages on 2 CPU
devices, so that on this machine's 2 cores the devices really run in
parallel, and M microbatches (default 8), at sizes where each call takes
milliseconds. XLA runs each computation on one thread (its Eigen pool off),
in pw-run and in JAX alike. For each policy it runs pw-run (median of N
runs, default 5) and reads its trace and `--stats`:

- step: pw-run's "last output ready" after 2 warm-up runs (`--warmup 2`;
  from the start of the run: compiles and process start are not in it),
  beside plain JAX running the same
  Python loop with stage s's calls on device s (`jax.device_put` between
  them, asynchronous dispatch, warm).
- bubble: the idle fraction of the 2 devices between the first call's
  start and the last call's end, from the trace (a device span starts when
  the host had enqueued it, the device was free and its inputs were ready),
  beside the textbook (p - 1) / (M + p - 1).
- peak bytes per stage: `pw-opt --emit=summary`'s estimate beside
  `pw-run --stats`'s measure (the buffers the run held).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# One thread per computation, in pw-run and in JAX.
ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count=2 {ONE_THREAD}"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import numpy as np  # noqa: E402

from pw.tools import find_tool  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
POLICIES = ("critical-path", "gpipe", "1f1b")
ROWS, WIDTH = 256, 384


def load_examples():
    spec = importlib.util.spec_from_file_location("pw_examples_generate", os.path.join(REPO, "examples", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


examples = load_examples()


def make_inputs(microbatches: int, stages: int = 2):
    rng = np.random.default_rng(20261201)
    xs = [rng.standard_normal((ROWS, WIDTH), dtype=np.float32) for _ in range(microbatches)]
    ys = [rng.standard_normal((ROWS, WIDTH), dtype=np.float32) for _ in range(microbatches)]
    params = [
        (
            rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / np.float32(np.sqrt(WIDTH)),
            rng.standard_normal((WIDTH,), dtype=np.float32) * np.float32(0.1),
        )
        for _ in range(stages)
    ]
    return [xs, ys, params]


def env_for_pw():
    env = dict(os.environ)
    env["XLA_FLAGS"] = ONE_THREAD
    if "PW_PJRT_PLUGIN" not in env and "PW_VENV" not in env and sys.prefix != sys.base_prefix:
        env["PW_VENV"] = sys.prefix
    return env


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{proc.stderr}")
    return proc.stdout


def ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+) ?(µs|us|ms|s)", text.strip()).groups()
    return float(value) * {"µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def bubble(trace_path: str) -> float:
    """Idle fraction of the device tracks between the first call's start
    and the last call's end (busy time as the union of each device's call
    spans)."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    calls = [e for e in events if e.get("ph") == "X" and e.get("cat") == "execute"]
    devices = sorted({e["tid"] for e in calls})
    start = min(e["ts"] for e in calls)
    end = max(e["ts"] + e["dur"] for e in calls)
    busy = 0.0
    for d in devices:
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in calls if e["tid"] == d)
        covered_to = start
        for a, b in spans:
            a = max(a, covered_to)
            if b > a:
                busy += b - a
                covered_to = b
    return 1.0 - busy / (len(devices) * (end - start))


def pw_measure(program: str, inputs: list[str], policy: str, cache: str, runs: int):
    steps, bubbles, measured = [], [], {}
    for _ in range(runs):
        with tempfile.NamedTemporaryFile(suffix=".json") as trace:
            out = run(
                [find_tool("pw-run"), program, *inputs, "--devices", "2", "--schedule", policy, "--stats",
                 "--trace", trace.name, "--compile-cache", cache, "--warmup", "2"],
                env=env_for_pw(),
            )
            steps.append(ms(re.search(r"last output ready at ([\d.]+ ?\S+),", out).group(1)))
            bubbles.append(bubble(trace.name))
            measured = {int(d): int(b) for d, b in re.findall(r"^\s+device\s+(\d+)\s+(\d+) B$", out, re.M)}
    return statistics.median(steps), statistics.median(bubbles), measured


def estimate(program: str, policy: str):
    out = run([find_tool("pw-opt"), program, f"--pw-lower=devices=2 schedule={policy}", "--emit=summary"])
    table = out.split("Memory (per device, in this order)")[1]
    return {int(d): int(b) for d, b in re.findall(r"^\s+(\d+)\s+.*\((\d+) B\)$", table, re.M)}


def jax_step(inputs, runs: int) -> float:
    """Plain JAX: the same loop, stage s's calls on device s."""
    import time

    devices = jax.devices("cpu")[:2]
    xs, ys, params = inputs
    forward = jax.jit(examples.stage_forward)
    backward = jax.jit(examples.stage_backward)
    last = jax.jit(examples.last_stage_backward)
    add = jax.jit(examples.accumulate)
    update = jax.jit(examples.sgd, static_argnums=4)
    w0 = [jax.device_put(p, devices[0]) for p in params[0]]
    w1 = [jax.device_put(p, devices[1]) for p in params[1]]
    xs = [jax.device_put(x, devices[0]) for x in xs]
    ys = [jax.device_put(y, devices[1]) for y in ys]

    def step():
        g0 = g1 = None
        losses = []
        for x, y in zip(xs, ys):
            h = jax.device_put(forward(*w0, x), devices[1])
            value, dw, db, g = last(*w1, h, y)
            g1 = (dw, db) if g1 is None else add(*g1, dw, db)
            losses.append(value)
            dw, db, _ = backward(*w0, x, jax.device_put(g, devices[0]))
            g0 = (dw, db) if g0 is None else add(*g0, dw, db)
        out = [update(*w0, *g0, 0.1 / len(xs)), update(*w1, *g1, 0.1 / len(xs)), losses]
        jax.block_until_ready(out)

    for _ in range(2):
        step()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    m, p = args.microbatches, 2
    inputs = make_inputs(m)
    with tempfile.TemporaryDirectory(prefix="pw-bench-schedules-") as tmp:
        program = examples.capture("pipeline_train", examples.pipeline_train_block, inputs)
        path = os.path.join(tmp, "train.mlir")
        program.save(path)
        files = []
        for i, a in enumerate(jax.tree.leaves(inputs)):
            files.append(os.path.join(tmp, f"input_{i}.npy"))
            np.save(files[-1], np.asarray(a))
        cache = os.path.join(tmp, "cache")
        pw_measure(path, files, "critical-path", cache, 1)  # warms the compile cache
        rows = []
        jax_ms = jax_step(inputs, args.runs)
        for policy in POLICIES:
            step, measured_bubble, measured = pw_measure(path, files, policy, cache, args.runs)
            estimated = estimate(path, policy)
            rows.append((policy, step, measured_bubble, estimated, measured))
    theory = (p - 1) / (m + p - 1)
    cores = os.cpu_count()
    print(
        f"Pipeline training step, p = {p} stages x M = {m} microbatches ({ROWS}x{WIDTH} per microbatch), "
        f"{p} CPU devices on {cores} cores, one thread per computation; medians of {args.runs} runs\n"
    )
    print("| policy | step (pw-run) | JAX, same loop | bubble (trace) | bubble (theory) | peak bytes stage 0: estimated / measured | stage 1: estimated / measured |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for policy, step, measured_bubble, estimated, measured in rows:
        cells = [f"{estimated.get(d, 0) / 1024:.0f} / {measured.get(d, 0) / 1024:.0f} KiB" for d in (0, 1)]
        print(
            f"| {policy} | {step:.1f} ms | {jax_ms:.1f} ms | {measured_bubble:.0%} | {theory:.0%} | {cells[0]} | {cells[1]} |"
        )


if __name__ == "__main__":
    main()
