"""The RL loop with overlap (examples/rl_loop) against the sequential loop.

Usage, from the repository root (needs target/{release,debug}/pw-run):

    .venv/bin/python benches/rl_loop.py [--runs N]

Both loops make the same calls: K iterations, each a trainer call on batch
k-1 (mesh `trainer`) and a sampler call making batch k (mesh `sampler`), on
two CPU devices. The overlapped loop samples batch k with the weights the
trainer starts from (one step off-policy), so the two can run at once; the
sequential loop samples it with the weights the trainer has just produced.

Each round runs both through pw-run (its own process: start, plugin, loading
the executables from a compile cache warmed first, run, outputs) and then
the same loops in plain JAX in this process (the same jitted functions, one
device per mesh, `jax.device_put` between them, warm). Prints one markdown
table of medians over the rounds:

- wall: pw-run's process, start to exit; JAX: the K iterations (the first
  sampler call included).
- trace window: first device span start to last device span end in
  pw-run's trace, the execution alone (its first iteration includes the
  first, slower execution of each computation, in JAX too).
- steady iteration: pw-run, the median interval between consecutive trainer
  completions in the trace, leaving out the first; JAX, the difference
  between the K-iteration loop and the K/2-iteration loop, per iteration.
  Throughput is its inverse.
- overlap: the fraction of the trainer's time during which the sampler was
  executing on the other device, from the trace (steady: without the first
  trainer call).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import numpy as np  # noqa: E402

from pw.tools import find_tool  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SEED = 20261130
RUN_TIMEOUT_S = 120


def load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


examples = load("pw_examples_generate", os.path.join(REPO, "examples", "generate.py"))
# The trace reading and the overlap measure are the test's (one definition).
sys.path.insert(0, os.path.join(REPO, "frontend", "python", "tests"))
rl_trace = load("test_rl_loop", os.path.join(REPO, "frontend", "python", "tests", "test_rl_loop.py"))


def pw_run(program: str, inputs: list[str], trace: str, cache: str) -> float:
    """One pw-run on two CPU devices; returns its wall time in seconds."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if "PW_PJRT_PLUGIN" not in env and "PW_VENV" not in env and sys.prefix != sys.base_prefix:
        env["PW_VENV"] = sys.prefix
    args = [find_tool("pw-run"), program, *inputs, "--devices", "2", "--trace", trace, "--compile-cache", cache, "-q"]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"pw-run failed (exit {proc.returncode}):\n{proc.stderr}")
    return wall


def trace_figures(path: str) -> dict:
    with open(path) as f:
        spans = rl_trace.device_spans(json.load(f))
    trainer = sorted(rl_trace.calls_on(spans, "trainer"), key=lambda s: s.end_ms)
    ends = [t.end_ms for t in trainer]
    steady = [b - a for a, b in zip(ends[1:], ends[2:])]
    later = trainer[1:]
    covered = sum(rl_trace.sampler_time_during(t, spans) for t in later)
    return {
        "window": (max(s.end_ms for s in spans) - min(s.start_ms for s in spans)) / 1e3,
        "steady": statistics.median(steady) / 1e3,
        "overlap": rl_trace.overlap_fraction(spans),
        "overlap_steady": covered / sum(t.duration_ms for t in later),
    }


class JaxLoop:
    """The loop of examples.rl_loop_block in plain JAX: the sampler's calls
    on device 0, the trainer's on device 1, arrays moved with device_put."""

    def __init__(self, inputs):
        self.sampler, self.trainer = jax.devices("cpu")[:2]
        self.sample = jax.jit(examples.rl_sample)
        self.train = jax.jit(examples.rl_train)
        policy, w_reward, seeds = inputs
        self.policy = jax.device_put(policy, self.sampler)
        self.w_reward = jax.device_put(w_reward, self.sampler)
        self.seeds = jax.device_put(seeds, self.sampler)

    def run(self, overlap: bool, iterations: int):
        """The first `iterations` iterations; returns the outputs as the
        block does."""
        policy_s = self.policy
        policy_t = jax.device_put(self.policy, self.trainer)
        batch = self.sample(policy_s, self.w_reward, self.seeds[0])
        rewards = [batch[-1]]
        for k in range(1, iterations + 1):
            if overlap:
                next_batch = self.sample(policy_s, self.w_reward, self.seeds[k])
            policy_t = self.train(policy_t, *jax.device_put(batch, self.trainer))
            policy_s = jax.device_put(policy_t, self.sampler)
            if not overlap:
                next_batch = self.sample(policy_s, self.w_reward, self.seeds[k])
            batch = next_batch
            rewards.append(batch[-1])
        return [*policy_t, *rewards]

    def time(self, overlap: bool, iterations: int) -> float:
        start = time.perf_counter()
        jax.block_until_ready(self.run(overlap, iterations))
        return time.perf_counter() - start

    def alone(self, repeats: int = 20) -> tuple[float, float]:
        """The median time of one sampler call and one trainer call, each
        alone on its device, warm."""
        batch = jax.block_until_ready(self.sample(self.policy, self.w_reward, self.seeds[0]))
        policy_t = jax.device_put(self.policy, self.trainer)
        batch_t = jax.device_put(batch, self.trainer)
        jax.block_until_ready(self.train(policy_t, *batch_t))

        def median(call):
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                jax.block_until_ready(call())
                times.append(time.perf_counter() - start)
            return statistics.median(times)

        return (
            median(lambda: self.sample(self.policy, self.w_reward, self.seeds[0])),
            median(lambda: self.train(policy_t, *batch_t)),
        )


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (medians over them)")
    args = parser.parse_args()

    inputs = examples.rl_loop_inputs(np.random.default_rng(SEED))
    iterations = len(inputs[-1]) - 1
    short = iterations // 2  # JAX's steady iteration: the K- and K/2-iteration loops' difference
    blocks = {"overlapped": examples.rl_loop_block, "sequential": partial(examples.rl_loop_block, overlap=False)}
    expected = {name: examples.reference(block, inputs) for name, block in blocks.items()}

    jax_loop = JaxLoop(inputs)
    for name, overlap in (("overlapped", True), ("sequential", False)):
        got = [np.asarray(a) for a in jax.block_until_ready(jax_loop.run(overlap, iterations))]  # warm-up
        for g, want in zip(got, expected[name]):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
    sample_alone, train_alone = jax_loop.alone()

    figures = {(name, runner): [] for name in blocks for runner in ("pw", "jax")}
    with tempfile.TemporaryDirectory(prefix="pw-bench-rl-loop-") as tmp:
        paths = []
        for i, a in enumerate(jax.tree.leaves(inputs)):
            paths.append(os.path.join(tmp, f"input_{i}.npy"))
            np.save(paths[-1], np.asarray(a))
        programs = {}
        for name, block in blocks.items():
            programs[name] = os.path.join(tmp, f"{name}.mlir")
            with open(programs[name], "w") as f:
                f.write(examples.capture(f"rl_loop_{name}", block, inputs).text())
        cache, trace = os.path.join(tmp, "cache"), os.path.join(tmp, "trace.json")
        for name in blocks:
            pw_run(programs[name], paths, trace, cache)  # compiles into the cache
        for _ in range(args.runs):
            for name, overlap in (("overlapped", True), ("sequential", False)):
                wall = pw_run(programs[name], paths, trace, cache)
                figures[(name, "pw")].append({"wall": wall, **trace_figures(trace)})
            for name, overlap in (("overlapped", True), ("sequential", False)):
                wall, half = jax_loop.time(overlap, iterations), jax_loop.time(overlap, short)
                figures[(name, "jax")].append({"wall": wall, "steady": (wall - half) / (iterations - short)})

    def med(name, runner, key):
        return statistics.median(f[key] for f in figures[(name, runner)])

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"RL loop, {iterations} iterations ({iterations + 1} sampler calls, {iterations} trainer calls), "
        f"2 CPU devices on {cores} cores; medians of {args.runs} rounds; JAX {jax.__version__}. "
        f"Alone (JAX, warm): sampler {ms(sample_alone)}, trainer {ms(train_alone)}.\n"
    )
    print("| loop | runner | wall (per iteration) | trace window (per iteration) | steady iteration | throughput | overlap (steady) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, label in (("overlapped", "overlapped, one step off-policy"), ("sequential", "sequential, on-policy")):
        wall, window, steady = med(name, "pw", "wall"), med(name, "pw", "window"), med(name, "pw", "steady")
        print(
            f"| {label} | pw-run | {ms(wall)} ({ms(wall / iterations)}) | {ms(window)} ({ms(window / iterations)}) "
            f"| {ms(steady)} | {1 / steady:.0f} it/s | {med(name, 'pw', 'overlap'):.2f} ({med(name, 'pw', 'overlap_steady'):.2f}) |"
        )
    for name, label in (("sequential", "sequential, on-policy"), ("overlapped", "overlapped, one step off-policy")):
        wall, steady = med(name, "jax", "wall"), med(name, "jax", "steady")
        print(f"| {label} | JAX, warm | {ms(wall)} ({ms(wall / iterations)}) | - | {ms(steady)} | {1 / steady:.0f} it/s | - |")
    pw_speedup = med("sequential", "pw", "steady") / med("overlapped", "pw", "steady")
    jax_speedup = med("sequential", "jax", "steady") / med("overlapped", "jax", "steady")
    print(
        f"\nOverlapped vs sequential, steady iteration: pw-run {pw_speedup:.2f}x, JAX {jax_speedup:.2f}x. "
        f"pw-run vs JAX, steady iteration: sequential "
        f"{med('sequential', 'pw', 'steady') / med('sequential', 'jax', 'steady'):.2f}x, overlapped "
        f"{med('overlapped', 'pw', 'steady') / med('overlapped', 'jax', 'steady'):.2f}x (below 1: pw-run faster)."
    )


if __name__ == "__main__":
    main()
