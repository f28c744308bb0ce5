"""A host-side preprocessing step next to the devices (pw's sidecar) against
the same step through the client (fetch, compute, upload), as one table
(docs/proxy.md, "The sidecar"):

    .venv/bin/python benches/sidecar.py [--mib N] [--steps N]

Each step normalizes a float32 array of N MiB sharded over 2 devices with
NumPy on the host, then feeds it to a jitted function:

* sidecar: the NumPy code is a `jax.experimental.colocated_python`
  function; through pw it runs in the sidecar of the worker holding the
  devices, and only requests cross the network;
* client: the client fetches the array (`np.asarray`), runs the same NumPy
  code, and uploads the result (`jax.device_put`);
* in-process JAX (the peer): the client variant on 4 in-process CPU
  devices, where fetch and upload are host memory copies.

The proxy runs use one pw-server and one pw-worker of 4 CPU devices
(release binaries of target/release: `cargo build --release -p pw-tools
-p pw-worker`), started with `--sidecar-python` this interpreter, every
process on 127.0.0.1, ended by PID. Each variant runs in a fresh client
process; the first step (compiling, starting the sidecar) is not timed.
"Loopback bytes" are what the loopback interface carried per step
(`/proc/net/dev`), between all the processes: the client, the server and
the worker run on 127.0.0.1, and nothing else here uses it.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "frontend", "python"))

BODY = r'''
import json, sys, time
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import colocated_python as cp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

how, mib, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
devices = cp.colocated_cpu_devices(jax.devices()[:2])
sharding = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
rows = mib * (1 << 20) // 4 // 256
x = jax.device_put(np.random.default_rng(0).standard_normal((rows, 256), np.float32), sharding)

def normalize_host(host):
    return np.clip((host - host.mean()) / host.std(), -3, 3).astype(np.float32)

@cp.colocated_python
def normalize(a):
    return jax.device_put(normalize_host(np.asarray(a)), a.sharding)

def via_client(a):
    return jax.device_put(normalize_host(np.asarray(a)), sharding)

prep = normalize if how == "sidecar" else via_client
step = jax.jit(lambda a: jnp.sum(a * a))

def io():
    # Bytes received on the loopback interface (each byte sent there is
    # received there once): all the traffic between client, server and
    # worker, which run on 127.0.0.1.
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, fields = line.partition(":")
            if name.strip() == "lo":
                return int(fields.split()[0])
    return 0

first = float(step(prep(x)))
times = []
before = io()
for _ in range(steps):
    t = time.perf_counter()
    value = float(step(prep(x)))
    times.append(time.perf_counter() - t)
moved = (io() - before) / steps
assert abs(value - first) <= 1e-3 * abs(first), (value, first)
times.sort()
print(json.dumps({"ms": 1e3 * times[len(times) // 2], "bytes": moved, "value": value}))
'''


def run(env, how, mib, steps):
    out = subprocess.run(
        [sys.executable, "-c", BODY, how, str(mib), str(steps)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        sys.exit(f"{how} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=16, help="array size in MiB (default 16)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps (default 10)")
    args = parser.parse_args()

    base = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "JAX_BACKEND_TARGET", "XLA_FLAGS")}
    base["TF_CPP_MIN_LOG_LEVEL"] = "2"
    in_process = dict(base, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    rows = [("in-process JAX, client variant (peer)", run(in_process, "client", args.mib, args.steps))]

    os.environ.setdefault("PW_BIN_DIR", os.path.join(ROOT, "target", "release"))
    from pw._local import LocalServer

    server = LocalServer(4)
    try:
        proxy = dict(base, JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{server.address}")
        rows.append(("pw, via the client (fetch, NumPy, upload)", run(proxy, "client", args.mib, args.steps)))
        rows.append(("pw, via the sidecar (colocated_python)", run(proxy, "sidecar", args.mib, args.steps)))
    finally:
        server.stop()

    print(f"| {args.mib} MiB float32 over 2 devices, NumPy normalize + jitted sum | ms per step (median of {args.steps}) | loopback bytes per step |")
    print("| --- | ---: | ---: |")
    for name, r in rows:
        print(f"| {name} | {r['ms']:.1f} | {r['bytes'] / 2**20:.2f} MiB |")


if __name__ == "__main__":
    main()
