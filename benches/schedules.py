"""Pipeline schedules: bubbles and memory per policy, measured and predicted.

Usage, from the repository root (needs target/{release,debug}/pw-run and
pw-opt):

    .venv/bin/python benches/schedules.py [--microbatches M] [--runs N]

The training step of examples/pipeline_train (forward, backward with
jax.vjp, gradient sums and SGD per stage), with p = 2 stages on 2 CPU
devices and M microbatches (default 8). Each stage is 32 tied 128-wide
layers on 64 rows (a loop of small matmuls, about a millisecond per
forward): XLA runs such a computation on one thread, so on this machine's
2 cores the two devices really run in parallel (a large matmul would use
both cores itself, and two devices would only share them). For each policy
it runs pw-run (median of N runs, default 5) and reads its trace and
`--stats`:

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
from functools import partial

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import numpy as np  # noqa: E402

from pw.tools import find_tool  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
POLICIES = ("critical-path", "gpipe", "1f1b")
ROWS, WIDTH, DEPTH = 64, 128, 32


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
            rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / np.float32(2 * np.sqrt(WIDTH)),
            rng.standard_normal((WIDTH,), dtype=np.float32) * np.float32(0.1),
        )
        for _ in range(stages)
    ]
    return [xs, ys, params]


def env_for_pw():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
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
    forward = jax.jit(partial(examples.stage_forward, depth=DEPTH))
    backward = jax.jit(partial(examples.stage_backward, depth=DEPTH))
    last = jax.jit(partial(examples.last_stage_backward, depth=DEPTH))
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


def compute_alone(inputs, runs: int = 20):
    """Seconds of each device's calls in one step, each call timed alone
    (warm, on one device, its output waited for): device 0 runs the forward,
    backward, gradient sums and update of stage 0; device 1 the last
    stage's fused forward and backward, its sums and update."""
    import time

    xs, ys, params = inputs
    m = len(xs)
    (w0, b0), (w1, b1) = params
    x, y = xs[0], ys[0]
    h = examples.stage_forward(w0, b0, x, DEPTH)
    _, dw, db, g = examples.last_stage_backward(w1, b1, h, y, DEPTH)

    def alone(fn, *args):
        f = jax.jit(fn, static_argnums=(4,) if fn is examples.sgd else ())
        if fn is not examples.sgd and fn is not examples.accumulate:
            f = jax.jit(partial(fn, depth=DEPTH))
        args = [jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args]
        jax.block_until_ready(f(*args))
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            jax.block_until_ready(f(*args))
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    add = alone(examples.accumulate, dw, db, dw, db)
    update = alone(examples.sgd, w0, b0, dw, db, 0.1)
    device0 = m * (alone(examples.stage_forward, w0, b0, x) + alone(examples.stage_backward, w0, b0, x, g))
    device1 = m * alone(examples.last_stage_backward, w1, b1, h, y)
    return device0 + (m - 1) * add + update, device1 + (m - 1) * add + update


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    m, p = args.microbatches, 2
    inputs = make_inputs(m)
    with tempfile.TemporaryDirectory(prefix="pw-bench-schedules-") as tmp:
        block = partial(examples.pipeline_train_block, depth=DEPTH)
        program = examples.capture("pipeline_train", block, inputs)
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
        work = compute_alone(inputs)
        for policy in POLICIES:
            step, measured_bubble, measured = pw_measure(path, files, policy, cache, args.runs)
            estimated = estimate(path, policy)
            rows.append((policy, step, measured_bubble, estimated, measured))
    theory = (p - 1) / (m + p - 1)
    cores = os.cpu_count()
    print(
        f"Pipeline training step, p = {p} stages x M = {m} microbatches ({ROWS}x{WIDTH}, {DEPTH} layers per stage), "
        f"{p} CPU devices on {cores} cores; medians of {args.runs} runs\n"
    )
    print(
        f"Each device's calls timed alone: {work[0] * 1e3:.1f} ms (stage 0), {work[1] * 1e3:.1f} ms (stage 1); "
        f"bound max = {max(work) * 1e3:.1f} ms\n"
    )
    print(
        "| policy | step (pw-run) | JAX, same loop | bubble: trace | bubble: 1 - work alone / (p x step) "
        "| bubble: theory | peak bytes stage 0: estimated / measured | stage 1: estimated / measured |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for policy, step, measured_bubble, estimated, measured in rows:
        from_work = 1.0 - sum(work) * 1e3 / (p * step)
        cells = [f"{estimated.get(d, 0) / 1024:.0f} / {measured.get(d, 0) / 1024:.0f} KiB" for d in (0, 1)]
        print(
            f"| {policy} | {step:.1f} ms | {jax_ms:.1f} ms | {measured_bubble:.0%} | {from_work:.0%} | {theory:.0%} "
            f"| {cells[0]} | {cells[1]} |"
        )
    print(f"\nJAX, same loop: bubble 1 - work alone / (p x step) = {1.0 - sum(work) * 1e3 / (p * jax_ms):.0%}")


if __name__ == "__main__":
    main()
