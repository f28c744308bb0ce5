"""The client boundary: what a call, a wait and a fetch cost a user of pw,
beside in-process JAX doing the same and beside loopback TCP, as one
table (docs/benchmarks.md, "The client boundary"):

    .venv/bin/pip install -r benches/requirements.txt   # Flax, Optax
    .venv/bin/python benches/client_boundary.py [--calls N] [--steps N]

Needs the release binaries (`cargo build --release --bins`). Two setups,
every process on 127.0.0.1, started and ended by PID:

* Unmodified JAX through the IFRT proxy (`JAX_PLATFORMS=proxy`): pw-server
  with two pw-workers of 2 CPU devices each; the peer is the same code in
  this machine's in-process JAX on 4 CPU devices. Each measurement runs in
  a fresh Python process.
  - dispatch: `f(x)` of a tiny jitted function (x + 1 on 16 floats)
    returning, without waiting; call + wait: `f(x).block_until_ready()`;
    call + fetch: `np.asarray(f(x))`; the median of N. The CPU each
    process used per call + wait (user + system, from /proc/PID/stat, over
    10 N calls): where the time of a two-core machine goes.
  - fetch / upload of 64 MiB: `np.asarray` of a device array, and
    `jax.device_put(...).block_until_ready()` of a numpy array, GB/s (the
    best of 5). In-process on CPU both may alias host memory (no copy): the
    floor for a copy is loopback TCP, in the last row. The CPU each process
    used in the fastest fetch and the fastest upload (to the kernel's 10 ms
    tick): where the time of a bulk transfer goes.
  - the 4-stage pipeline of benches/proxy.py (8 microbatches, every one
    dispatched before any result is fetched): one step, the median of N.
  - a Flax NNX MLP (3 layers of 256) trained with Optax AdamW on batches of
    64, the loss read back every step as real loops do: one step, the
    median of N.
* Sessions (`pw.connect`, `p.compile`): a local pw-server with one pw-worker
  of 4 CPU devices; the peer is in-process JAX.
  - `exe(x)` returning, and `np.asarray(exe(x))`, for a tiny program (x * 2
    of 8x4 floats); the median of N; the CPU per call + fetch of the
    client, pw-server and pw-worker, as for the proxy.
  - fetch and upload of 64 MiB: `np.asarray` of a pw.Array, and a call
    of a program that only reads its 64 MiB numpy argument (`v[:1]`) until
    its output is ready, less a tiny call's time, GB/s (the best of 5).
  - the 4-stage training loop of benches/sessions.py at width 512, its
    weights on the devices: one step, the median of 3 runs of N steps.
* Loopback TCP: 64 MiB from one process to another with
  `socket.sendall` / `recv_into`, GB/s (the best of 5).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from proxy import Server, tool  # noqa: E402  (benches/proxy.py)

SIZE = 64 << 20

# Measured in a fresh process, the same code on both sides; prints one
# JSON line.
BODY = r'''
import json, os, statistics, sys, time
import numpy as np
import jax, jax.numpy as jnp

what, n = sys.argv[1], int(sys.argv[2])
SIZE = 64 << 20
out = {}

sys.path.insert(0, os.environ["PW_BENCH_DIR"])
from client_boundary import cpu_per_call_us, cpu_seconds  # noqa: E402


def median_ms(f, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


if what == "calls":
    f = jax.jit(lambda x: x + 1)
    x = jax.device_put(np.zeros(16, np.float32))
    f(x).block_until_ready()
    held = []
    out["dispatch_ms"] = median_ms(lambda: held.append(f(x)), n)
    jax.block_until_ready(held)
    out["wait_ms"] = median_ms(lambda: f(x).block_until_ready(), n)
    out["fetch_ms"] = median_ms(lambda: np.asarray(f(x)), n)
    # This process, then pw-server and its workers (none in-process).
    pids = [os.getpid()] + [int(p) for p in os.environ.get("PW_BENCH_PIDS", "").split()]
    out["cpu_us"] = cpu_per_call_us(pids, lambda: f(x).block_until_ready(), 10 * n)
elif what == "bulk":
    # This process, then pw-server and its workers (none in-process).
    pids = [os.getpid()] + [int(p) for p in os.environ.get("PW_BENCH_PIDS", "").split()]
    make = jax.jit(lambda: jnp.arange(SIZE // 4, dtype=jnp.float32))
    np.asarray(make())
    fetch, fetch_cpu = 0.0, []
    for _ in range(5):
        y = make()
        y.block_until_ready()
        before, t = cpu_seconds(pids), time.perf_counter()
        host = np.asarray(y)
        gbps = SIZE / (time.perf_counter() - t) / 1e9
        if gbps > fetch:
            fetch, fetch_cpu = gbps, [b - a for a, b in zip(before, cpu_seconds(pids))]
        assert host[-1] == SIZE // 4 - 1
        del y, host
    data = np.arange(SIZE // 4, dtype=np.float32)
    jax.device_put(data).block_until_ready()
    upload, upload_cpu = 0.0, []
    for _ in range(5):
        before, t = cpu_seconds(pids), time.perf_counter()
        y = jax.device_put(data)
        y.block_until_ready()
        gbps = SIZE / (time.perf_counter() - t) / 1e9
        if gbps > upload:
            upload, upload_cpu = gbps, [b - a for a, b in zip(before, cpu_seconds(pids))]
        del y
    out = {
        "fetch_gbps": fetch,
        "upload_gbps": upload,
        "fetch_cpu_ms": [round(c * 1e3, 1) for c in fetch_cpu],
        "upload_cpu_ms": [round(c * 1e3, 1) for c in upload_cpu],
    }
elif what == "pipeline":
    devices = jax.devices()[:4]
    w = np.linspace(-1, 1, 256 * 256, dtype=np.float32).reshape(256, 256) / 16

    def stage(v, w):
        for _ in range(4):
            v = jnp.tanh(v @ w)
        return v

    stages = [jax.jit(stage) for _ in devices]
    ws = [jax.device_put(w, d) for d in devices]
    rng = np.random.default_rng(0)
    batches = [jax.device_put(rng.standard_normal((256, 256), dtype=np.float32), devices[0]) for _ in range(8)]

    def step():
        outs = []
        for x in batches:
            for k, d in enumerate(devices):
                x = stages[k](jax.device_put(x, d), ws[k])
            outs.append(x)
        for o in outs:
            o.block_until_ready()

    step()
    out["step_ms"] = median_ms(step, n)
elif what == "flax":
    from flax import nnx
    import optax

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.a = nnx.Linear(64, 256, rngs=rngs)
            self.b = nnx.Linear(256, 256, rngs=rngs)
            self.c = nnx.Linear(256, 1, rngs=rngs)

        def __call__(self, x):
            return self.c(jax.nn.relu(self.b(jax.nn.relu(self.a(x)))))

    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, optimizer, x, y):
        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64), dtype=np.float32)
    y = x.sum(axis=1, keepdims=True) / 8
    losses = []
    for _ in range(3):
        losses.append(float(train_step(model, optimizer, x, y)))
    out["step_ms"] = median_ms(lambda: losses.append(float(train_step(model, optimizer, x, y))), n)
    out["loss_first"], out["loss_last"] = losses[0], losses[-1]
print(json.dumps(out))
'''


def measure(env, what, n):
    env = dict(env, PW_BENCH_DIR=HERE)
    r = subprocess.run([sys.executable, "-c", BODY, what, str(n)], env=env, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def cpu_seconds(pids):
    """CPU (user + system) each of `pids` has used so far, seconds (to the
    kernel's tick, 10 ms here)."""
    tick = os.sysconf("SC_CLK_TCK")
    times = []
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        times.append((int(fields[11]) + int(fields[12])) / tick)
    return times


def cpu_per_call_us(pids, f, calls):
    """CPU (user + system) per call of `f` in each of `pids`, µs."""
    before = cpu_seconds(pids)
    for _ in range(calls):
        f()
    return [round((b - a) * 1e6 / calls, 1) for a, b in zip(before, cpu_seconds(pids))]


def loopback_tcp() -> float:
    """64 MiB from a child process over loopback TCP, GB/s (best of 5)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, sys\n"
            f"data = bytes({SIZE})\n"
            "for _ in range(5):\n"
            f"    s = socket.create_connection(('127.0.0.1', {port}))\n"
            "    s.sendall(data)\n"
            "    s.close()\n",
        ]
    )
    best = 0.0
    buffer = bytearray(SIZE)
    view = memoryview(buffer)
    try:
        for _ in range(5):
            conn, _ = listener.accept()
            with conn:
                t = time.perf_counter()
                got = 0
                while got < SIZE:
                    n = conn.recv_into(view[got:], SIZE - got)
                    if n == 0:
                        break
                    got += n
                best = max(best, got / (time.perf_counter() - t) / 1e9)
    finally:
        child.wait(60)
        listener.close()
    return best


def sessions(calls: int, steps: int):
    """The session rows, measured in this process (see the module doc)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    import jax
    import jax.numpy as jnp
    import numpy as np

    import pw
    import sessions as bench  # benches/sessions.py
    from pw._local import LocalServer

    def median_ms(f, n):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return 1e3 * statistics.median(times)

    out = {}
    server = LocalServer(4)
    try:
        with pw.connect(server.address) as client:
            exe = bench.tiny_program().compile(client)
            x = np.ones((8, 4), np.float32)
            np.asarray(exe(x))
            held = []
            out["dispatch_ms"] = median_ms(lambda: held.append(exe(x)), calls)
            np.asarray(held[-1])
            held.clear()
            out["fetch_ms"] = median_ms(lambda: np.asarray(exe(x)), calls)
            out["cpu_us"] = cpu_per_call_us([os.getpid(), server.server.pid, server.worker.pid], lambda: np.asarray(exe(x)), 10 * calls)
            stats = client.stats()
            out["stats"] = {k: round(stats[k], 1) for k in ("submit_us", "dispatch_us", "run_us")}
            n = SIZE // 4
            with pw.program("put") as p:
                v = p.input(jax.ShapeDtypeStruct((n,), jnp.float32))
                with pw.mesh("m", devices=1):
                    p.outputs(jax.jit(lambda v: v[:1])(v))
            put = p.compile(client)
            with pw.program("bulk") as p:
                v = p.input(jax.ShapeDtypeStruct((n,), jnp.float32))
                with pw.mesh("m", devices=1):
                    p.outputs(jax.jit(lambda v: v + 1)(v))
            big = p.compile(client)
            host = np.arange(n, dtype=np.float32)
            tiny_call = median_ms(lambda: np.asarray(exe(x)), 20) / 1e3
            put(host).block_until_ready()
            upload = fetch = 0.0
            for _ in range(5):
                t = time.perf_counter()
                put(host).block_until_ready()
                upload = max(upload, SIZE / max(time.perf_counter() - t - tiny_call, 1e-9) / 1e9)
                whole = big(host)
                whole.block_until_ready()
                t = time.perf_counter()
                got = np.asarray(whole)
                fetch = max(fetch, SIZE / (time.perf_counter() - t) / 1e9)
                assert got[-1] == host[-1] + 1
                del whole, got
            out["upload_gbps"], out["fetch_gbps"] = upload, fetch
            inputs = bench.make_inputs(512)
            out["loop_ms"] = bench.pw_loop(client, inputs, steps, 3)[0]
    finally:
        server.stop()
    f = jax.jit(lambda v: v * 2)
    xj = jax.device_put(x)
    np.asarray(f(xj))
    held = []
    out["jax_dispatch_ms"] = median_ms(lambda: held.append(f(xj)), calls)
    jax.block_until_ready(held)
    out["jax_fetch_ms"] = median_ms(lambda: np.asarray(f(jax.device_put(x))), calls)
    out["jax_cpu_us"] = cpu_per_call_us([os.getpid()], lambda: np.asarray(f(jax.device_put(x))), 10 * calls)[0]
    out["jax_loop_ms"] = bench.jax_loop(bench.make_inputs(512), steps, 3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=300, help="calls timed per latency row (default 300)")
    ap.add_argument("--steps", type=int, default=20, help="training and pipeline steps timed (default 20)")
    args = ap.parse_args()
    tool("pw-server")
    try:
        import flax  # noqa: F401
        import optax  # noqa: F401
    except ImportError as e:
        sys.exit(f"client_boundary: {e.name} is missing: .venv/bin/pip install -r benches/requirements.txt")
    local = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    print("measuring the proxy ...", file=sys.stderr, flush=True)
    server = Server()
    try:
        proxy = dict(os.environ, JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{server.address}")
        proxy["PW_BENCH_PIDS"] = " ".join(str(p.pid) for p in server.procs)
        proxy.pop("XLA_FLAGS", None)
        runs = {}
        for what, n in [("calls", args.calls), ("bulk", 0), ("pipeline", args.steps), ("flax", args.steps * 5)]:
            runs[what] = (measure(local, what, n), measure(proxy, what, n))
    finally:
        server.stop()
    print("measuring sessions ...", file=sys.stderr, flush=True)
    s = sessions(args.calls, args.steps)
    tcp = loopback_tcp()
    j, p = runs["calls"]
    rows = [
        ("proxy: tiny call dispatch (returns)", f"{p['dispatch_ms'] * 1e3:.0f} µs", f"{j['dispatch_ms'] * 1e3:.1f} µs", ""),
        ("proxy: tiny call + wait", f"{p['wait_ms'] * 1e3:.0f} µs", f"{j['wait_ms'] * 1e3:.1f} µs", ""),
        ("proxy: tiny call + np.asarray", f"{p['fetch_ms'] * 1e3:.0f} µs", f"{j['fetch_ms'] * 1e3:.1f} µs", ""),
        (
            "proxy: CPU per tiny call + wait (JAX client / pw-server / pw-workers)",
            f"{p['cpu_us'][0]:.0f} / {p['cpu_us'][1]:.0f} / {sum(p['cpu_us'][2:]):.0f} µs",
            f"{j['cpu_us'][0]:.0f} µs",
            "",
        ),
    ]
    j, p = runs["bulk"]
    rows += [
        ("proxy: np.asarray of 64 MiB", f"{p['fetch_gbps']:.2f} GB/s", f"{j['fetch_gbps']:.3g} GB/s (aliases)", f"{tcp:.2f} GB/s"),
        ("proxy: device_put of 64 MiB", f"{p['upload_gbps']:.2f} GB/s", f"{j['upload_gbps']:.3g} GB/s", f"{tcp:.2f} GB/s"),
    ]
    for what, label in [("fetch", "np.asarray"), ("upload", "device_put")]:
        cpu = p[f"{what}_cpu_ms"]
        rows.append(
            (
                f"proxy: CPU in the fastest {label} of 64 MiB (JAX client / pw-server / pw-workers)",
                f"{cpu[0]:.0f} / {cpu[1]:.0f} / {sum(cpu[2:]):.0f} ms",
                f"{j[f'{what}_cpu_ms'][0]:.0f} ms",
                "",
            )
        )
    for what, label in [("pipeline", "proxy: 4-stage pipeline, 8 microbatches, per step"), ("flax", "proxy: Flax NNX + Optax AdamW MLP, loss read each step")]:
        j, p = runs[what]
        rows.append((label, f"{p['step_ms']:.2f} ms", f"{j['step_ms']:.2f} ms", f"{p['step_ms'] / j['step_ms']:.2f}x"))
    rows += [
        ("sessions: exe(x) returns", f"{s['dispatch_ms'] * 1e3:.0f} µs", f"{s['jax_dispatch_ms'] * 1e3:.1f} µs", ""),
        ("sessions: tiny call + np.asarray", f"{s['fetch_ms'] * 1e3:.0f} µs", f"{s['jax_fetch_ms'] * 1e3:.1f} µs", ""),
        (
            "sessions: CPU per tiny call + np.asarray (client / pw-server / pw-worker)",
            " / ".join(f"{c:.0f}" for c in s["cpu_us"]) + " µs",
            f"{s['jax_cpu_us']:.0f} µs",
            "",
        ),
        ("sessions: np.asarray of 64 MiB", f"{s['fetch_gbps']:.2f} GB/s", "", f"{tcp:.2f} GB/s"),
        ("sessions: 64 MiB numpy argument", f"{s['upload_gbps']:.2f} GB/s", "", f"{tcp:.2f} GB/s"),
        ("sessions: 4-stage training loop, D=512, per step", f"{s['loop_ms']:.2f} ms", f"{s['jax_loop_ms']:.2f} ms", f"{s['loop_ms'] / s['jax_loop_ms']:.2f}x"),
    ]
    print(f"The client boundary, {os.cpu_count()} cores; client.stats() per tiny call: {s['stats']}\n")
    print("| measure | pw | in-process JAX | ratio / loopback TCP |")
    print("| --- | ---: | ---: | ---: |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    j, p = runs["flax"]
    print(f"\nFlax loss, first and last step: JAX {j['loss_first']:.4f} -> {j['loss_last']:.4f}, pw {p['loss_first']:.4f} -> {p['loss_last']:.4f}")


if __name__ == "__main__":
    main()
