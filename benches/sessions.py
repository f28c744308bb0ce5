"""Sessions: a training loop with its weights on the devices, p.run's
per-call cost, and moving arrays between host and devices.

Usage, from the repository root (needs target/{release,debug}/pw-server and
pw-worker, and pw-run for the "before" row):

    .venv/bin/python benches/sessions.py [--steps N] [--runs R] [--width W]

Prints one table; every pw figure sits beside its peer measured in the
same run:

- training loop: the training step of examples/pipeline_train (forward,
  backward with jax.vjp, gradient sums, SGD) with 4 stages of one W-wide
  layer (default 1024) on 4 CPU devices, 4 microbatches of 32 rows; the
  weights are fed back each step (donated), the batch is sent each step.
  Per step: the median over R runs (default 3) of N steps (default 20)
  divided by N, both warm (2 steps first); pw through `p.compile` on a
  session of a local pw-server with one 4-device pw-worker, plain JAX with
  the same Python loop, stage s's calls on device s (`jax.device_put`
  between them). Also: compiles and lowerings per step (after the first),
  and bytes over the wire per step (client to server, server to workers,
  and back).
- p.run on a tiny program (x * 2 of 8x4 floats): before (through the
  pw-run tool: a process, .npy files, lowering and compile-cache lookups
  per call) and after (the session path); median of 20 calls.
- a 64 MiB float32 array: `np.asarray` of a pw.Array (worker to server to
  client, two processes away) and the upload of a numpy argument, in GB/s,
  beside a copy of a JAX device array to numpy in JAX's own process (CPU
  device memory is host memory: that copy is all JAX pays).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import pw  # noqa: E402
from pw._local import LocalServer  # noqa: E402
from schedules import load_examples  # noqa: E402  (benches/schedules.py)

STAGES, MICROBATCHES, ROWS = 4, 4, 32


examples = load_examples()


def make_inputs(width: int):
    rng = np.random.default_rng(20261201)
    xs = [rng.standard_normal((ROWS, width), dtype=np.float32) for _ in range(MICROBATCHES)]
    ys = [rng.standard_normal((ROWS, width), dtype=np.float32) for _ in range(MICROBATCHES)]
    params = [
        (
            rng.standard_normal((width, width), dtype=np.float32) / np.float32(np.sqrt(width)),
            rng.standard_normal((width,), dtype=np.float32) * np.float32(0.1),
        )
        for _ in range(STAGES)
    ]
    return xs, ys, params


def wire_bytes(s: dict) -> int:
    return s["bytes_from_client"] + s["bytes_to_client"] + s["bytes_to_workers"] + s["bytes_from_workers"]


def pw_loop(client, inputs, steps: int, runs: int):
    xs, ys, params = inputs
    program = examples.capture("pipeline_train", examples.pipeline_train_block, [xs, ys, params])
    n = 2 * STAGES
    first = 2 * MICROBATCHES
    step = program.compile(client, donate_argnums=tuple(range(first, first + n)))
    state = jax.tree.leaves(params)
    for _ in range(2):
        state = step(xs, ys, state)[:n]
    jax.block_until_ready([s.block_until_ready() for s in state])
    per_step, before = [], client.stats()
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(steps):
            state = step(xs, ys, state)[:n]
        for s in state:
            s.block_until_ready()
        per_step.append((time.perf_counter() - t) * 1e3 / steps)
    after = client.stats()
    total = runs * steps
    compiles = (after["executables_compiled"] + after["lowerings"] - before["executables_compiled"] - before["lowerings"]) / total
    return statistics.median(per_step), compiles, (wire_bytes(after) - wire_bytes(before)) / total


def jax_loop(inputs, steps: int, runs: int):
    devices = jax.devices("cpu")[:STAGES]
    xs, ys, params = inputs
    forward = jax.jit(examples.stage_forward)
    backward = jax.jit(examples.stage_backward)
    last = jax.jit(examples.last_stage_backward)
    add = jax.jit(examples.accumulate)
    update = jax.jit(examples.sgd, static_argnums=4)
    state = [tuple(jax.device_put(p, devices[s]) for p in params[s]) for s in range(STAGES)]

    def step(state):
        grads = [None] * STAGES
        for x, y in zip(xs, ys):
            saved, h = [], jax.device_put(x, devices[0])
            for s in range(STAGES - 1):
                saved.append(h)
                h = jax.device_put(forward(*state[s], h), devices[s + 1])
            value, dw, db, g = last(*state[-1], h, jax.device_put(y, devices[-1]))
            grads[-1] = (dw, db) if grads[-1] is None else add(*grads[-1], dw, db)
            for s in reversed(range(STAGES - 1)):
                dw, db, g = backward(*state[s], saved[s], jax.device_put(g, devices[s]))
                grads[s] = (dw, db) if grads[s] is None else add(*grads[s], dw, db)
        return [update(*state[s], *grads[s], 0.1 / len(xs)) for s in range(STAGES)]

    for _ in range(2):
        state = step(state)
    jax.block_until_ready(state)
    per_step = []
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(steps):
            state = step(state)
        jax.block_until_ready(state)
        per_step.append((time.perf_counter() - t) * 1e3 / steps)
    return statistics.median(per_step)


def tiny_program():
    with pw.program("tiny") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("m", devices=1):
            y = jax.jit(lambda v: v * 2)(x)
        p.outputs(y)
    return p


def run_overhead(client, calls: int = 20):
    p = tiny_program()
    x = np.ones((8, 4), np.float32)
    p.run(x)  # compiles once
    after = []
    for _ in range(calls):
        t = time.perf_counter()
        p.run(x)
        after.append((time.perf_counter() - t) * 1e3)
    text = p.text(locations=True)
    before = []
    for _ in range(max(calls // 4, 3)):
        t = time.perf_counter()
        pw.tools.run(text, [x])  # a pw-run process per call, as before sessions
        before.append((time.perf_counter() - t) * 1e3)
    return statistics.median(before), statistics.median(after)


def transfers(client, runs: int):
    n = (64 << 20) // 4
    with pw.program("big") as p:
        x = p.input(jax.ShapeDtypeStruct((n,), jnp.float32))
        with pw.mesh("m", devices=1):
            y = jax.jit(lambda v: v + 1)(x)
        p.outputs(y)
    exe = p.compile(client)
    host = np.arange(n, dtype=np.float32)
    exe(host).block_until_ready()
    fetch, upload = [], []
    for _ in range(runs):
        t = time.perf_counter()
        y = exe(host)  # returns once the argument is on the workers
        upload.append(host.nbytes / (time.perf_counter() - t) / 1e9)
        y.block_until_ready()
        t = time.perf_counter()
        got = np.asarray(y)
        fetch.append(host.nbytes / (time.perf_counter() - t) / 1e9)
        assert got[-1] == host[-1] + 1
        y.delete()
    device = jax.device_put(host)
    jax_fetch = []
    for _ in range(runs):
        fresh = (device + 0).block_until_ready()
        t = time.perf_counter()
        np.array(fresh, copy=True)
        jax_fetch.append(host.nbytes / (time.perf_counter() - t) / 1e9)
    return statistics.median(fetch), statistics.median(upload), statistics.median(jax_fetch)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args()
    inputs = make_inputs(args.width)
    server = LocalServer(STAGES)
    try:
        with pw.connect(server.address) as client:
            pw_ms, compiles, wire = pw_loop(client, inputs, args.steps, args.runs)
            before_ms, after_ms = run_overhead(client)
            fetch, upload, jax_fetch = transfers(client, args.runs)
    finally:
        server.stop()
    jax_ms = jax_loop(inputs, args.steps, args.runs)
    batch = sum(a.nbytes for a in inputs[0] + inputs[1])
    print(
        f"Sessions: {STAGES}-stage training step ({MICROBATCHES} microbatches of {ROWS}x{args.width}), "
        f"{args.steps} steps x {args.runs} runs, {STAGES} CPU devices on {os.cpu_count()} cores\n"
    )
    print("| measure | pw | peer | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| training loop, per step (warm) | {pw_ms:.1f} ms | JAX {jax_ms:.1f} ms | {pw_ms / jax_ms:.2f}x |")
    print(f"| compiles + lowerings per step (after the first) | {compiles:.2f} | JAX 0 | |")
    print(
        f"| bytes over the wire per step (client to server, server to workers, and back) | {wire / 2**20:.2f} MiB "
        f"| the batch: {batch / 2**20:.2f} MiB, two hops | |"
    )
    print(f"| p.run, tiny program, per call | {after_ms:.2f} ms (session) | {before_ms:.1f} ms (pw-run tool, before) | {before_ms / after_ms:.0f}x faster |")
    print(f"| np.asarray of a 64 MiB pw.Array | {fetch:.2f} GB/s | JAX in process, a copy: {jax_fetch:.2f} GB/s | |")
    print(f"| 64 MiB numpy argument to the devices | {upload:.2f} GB/s | | |")


if __name__ == "__main__":
    main()
