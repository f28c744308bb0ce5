"""Unmodified JAX on pw through the IFRT proxy, against in-process JAX, as
one table (docs/proxy.md):

    .venv/bin/python benches/proxy.py [--calls N] [--steps N]

The peer is the same code in this machine's in-process JAX on 4 CPU
devices. The proxy side is pw-server with two pw-workers of 2 devices each
(release binaries of target/release: `cargo build --release -p pw-tools
-p pw-worker`), every process on 127.0.0.1, started and ended by PID.

* Call latency: a tiny jitted function (x + 1 on 16 floats), called and
  waited for (`block_until_ready`) N times; the median and the 90th
  percentile of one call.
* Fetch: `np.asarray` of a 64 MiB float32 array computed on a device: GB/s
  (the best of 5). In-process on CPU it aliases the device buffer (no
  copy), so that column is an upper bound, not a transfer.
* Pipeline: 4 stages (256-wide tanh matmul chains), one per device, 8
  microbatches per step, every microbatch dispatched before any result is
  fetched; the time of one step (the median of N).

Each measurement runs in a fresh Python process of its own; the first call
of each jitted function (compiling) is not timed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")


def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.isfile(path):
        sys.exit(f"{path} is missing: cargo build --release -p pw-tools -p pw-worker")
    return path


# The measured code: plain JAX, the same on both sides. Prints one JSON line.
BODY = r'''
import json, sys, time
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, Mesh

what, n = sys.argv[1], int(sys.argv[2])
out = {}
if what == "latency":
    f = jax.jit(lambda x: x + 1)
    x = jax.device_put(np.zeros(16, np.float32))
    f(x).block_until_ready()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f(x).block_until_ready()
        times.append(time.perf_counter() - t)
    times.sort()
    out = {"median_ms": 1e3 * times[len(times) // 2], "p90_ms": 1e3 * times[int(len(times) * 0.9)]}
elif what == "fetch":
    size = 64 << 20
    make = jax.jit(lambda: jnp.arange(size // 4, dtype=jnp.float32))
    np.asarray(make())
    best = 0.0
    for _ in range(5):
        y = make()
        y.block_until_ready()
        t = time.perf_counter()
        host = np.asarray(y)
        best = max(best, size / (time.perf_counter() - t) / 1e9)
        assert host[-1] == size // 4 - 1
    out = {"gbps": best}
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
        return outs

    step()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    out = {"step_ms": 1e3 * sorted(times)[len(times) // 2]}
print(json.dumps(out))
'''


def measure(env, what, n):
    r = subprocess.run([sys.executable, "-c", BODY, what, str(n)], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


class Server:
    """pw-server and two pw-workers of 2 devices, ended by PID."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="pw-bench-proxy-")
        self.procs = []
        server = self._start("pw-server", ["--listen", "127.0.0.1:0"], stdout=subprocess.PIPE)
        line = server.stdout.readline()
        prefix = "pw-server: listening on "
        if prefix not in line:
            raise RuntimeError(f"pw-server said {line!r}")
        self.address = line.split(prefix, 1)[1].strip()
        for i in range(2):
            self._start("pw-worker", ["--controller", self.address, "--devices", "2", "--listen", "127.0.0.1:0"], log=f"worker-{i}")
        self._wait_workers(2)

    def _start(self, name, args, stdout=subprocess.DEVNULL, log=None):
        err = open(os.path.join(self.dir, f"{log or name}.log"), "w")
        proc = subprocess.Popen([tool(name), *args], stdout=stdout, stderr=err, text=True)
        self.procs.append(proc)
        return proc

    def _wait_workers(self, n):
        status = [tool("pw-status"), "--server", self.address, "--json"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            r = subprocess.run(status, capture_output=True, text=True, timeout=10)
            if r.returncode == 0 and len(json.loads(r.stdout).get("workers", [])) == n:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{n} workers did not register; logs in {self.dir}")

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
                p.wait(10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=300, help="calls timed for the latency (default 300)")
    ap.add_argument("--steps", type=int, default=5, help="pipeline steps timed (default 5)")
    args = ap.parse_args()
    local = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    server = Server()
    try:
        proxy = dict(os.environ, JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{server.address}")
        proxy.pop("XLA_FLAGS", None)
        rows = []
        measured = {}
        for what, n, key, label, unit in [
            ("latency", args.calls, "median_ms", "tiny jit call, median", "ms"),
            ("latency", args.calls, "p90_ms", "tiny jit call, p90", "ms"),
            ("fetch", 0, "gbps", "np.asarray of 64 MiB", "GB/s"),
            ("pipeline", args.steps, "step_ms", "4-stage pipeline, 8 microbatches: one step", "ms"),
        ]:
            if what not in measured:
                print(f"measuring {what} ...", file=sys.stderr, flush=True)
                measured[what] = (measure(local, what, n), measure(proxy, what, n))
            a, b = measured[what]
            rows.append((label, unit, a[key], b[key]))
    finally:
        server.stop()
    print("| measurement | in-process JAX (4 CPU devices) | JAX through pw's IFRT proxy (2 workers x 2 devices) |")
    print("| --- | --- | --- |")
    for label, unit, a, b in rows:
        print(f"| {label} | {a:.3g} {unit} | {b:.3g} {unit} |")


if __name__ == "__main__":
    main()
