"""A host-side preprocessing step next to the devices (pw's sidecar) against
the same step through the client (fetch, compute, upload), as one table
(docs/proxy.md, "The sidecar"):

    .venv/bin/python benches/sidecar.py [--mib N] [--steps N]

Each step makes a fresh float32 array of N MiB sharded over 2 devices (a
jitted shift of an array already there), normalizes it with NumPy on the
host, then feeds it to a jitted sum:

* sidecar: the NumPy code runs next to the devices, and only requests
  cross the network. Through unmodified JAX it is a
  `jax.experimental.colocated_python` function; in a pw program, a
  `pw.sidecar` step between the two jitted calls (the whole step is one
  program, called with the array kept on the devices);
* client: the client fetches the array (`np.asarray`), runs the same NumPy
  code, and uploads the result (`jax.device_put`, or a second pw program);
* in-process JAX (the peer): the client variant on 4 in-process CPU
  devices, where fetch and upload are host memory copies.

The pw runs use one pw-server and one pw-worker of 4 CPU devices
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

# What every variant shares: the arguments, the NumPy step, the loopback
# counter and the timing loop (`one(i)` runs step i).
COMMON = r'''
import json, sys, time
import numpy as np
import jax, jax.numpy as jnp

how, mib, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = mib * (1 << 20) // 4 // 256
x_host = np.random.default_rng(0).standard_normal((rows, 256), np.float32)

def normalize_host(host):
    return np.clip((host - host.mean()) / host.std(), -3, 3).astype(np.float32)

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

def measure(one):
    one(0)
    times = []
    before = io()
    for i in range(1, steps + 1):
        t = time.perf_counter()
        value = one(i)
        times.append(time.perf_counter() - t)
    moved = (io() - before) / steps
    times.sort()
    print(json.dumps({"ms": 1e3 * times[len(times) // 2], "bytes": moved, "value": value}))
'''

# Unmodified JAX (in process, or through the proxy).
JAX = COMMON + r'''
from jax.experimental import colocated_python as cp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

devices = cp.colocated_cpu_devices(jax.devices()[:2])
sharding = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
x = jax.device_put(x_host, sharding)

@cp.colocated_python
def normalize(a):
    return jax.device_put(normalize_host(np.asarray(a)), a.sharding)

def via_client(a):
    return jax.device_put(normalize_host(np.asarray(a)), sharding)

prep = normalize if how == "sidecar" else via_client
shift = jax.jit(lambda a, i: a + i)
total = jax.jit(lambda a: jnp.sum(a * a))
measure(lambda i: float(total(prep(shift(x, np.float32(i))))))
'''

# A pw session (pw.connect): programs of pw.program.
PW = COMMON + r'''
import pw
from jax.sharding import PartitionSpec as P

shift = jax.jit(lambda a, i: a + i, out_shardings=P("x"))
total = jax.jit(lambda a: jnp.sum(a * a))
normalize = pw.sidecar(normalize_host, out_specs=lambda a: a, in_shardings=P("x"), out_shardings=P("x"))
spec = jax.ShapeDtypeStruct(x_host.shape, np.float32)
scalar = jax.ShapeDtypeStruct((), np.float32)

def program(name, body, *specs):
    with pw.program(name) as p:
        with pw.mesh("m", devices=2):
            args = [p.input(s, mesh="m", sharding=P("x") if s.shape else None) for s in specs]
            p.outputs(body(*args))
    return p

client = pw.connect(sys.argv[4], devices=2)
fresh = program("fresh", shift, spec, scalar).compile(client)
x = fresh(x_host, np.float32(0))
if how == "sidecar":
    whole = program("whole", lambda a, i: total(normalize(shift(a, i))), spec, scalar).compile(client)
    measure(lambda i: float(np.asarray(whole(x, np.float32(i)))))
else:
    reduce = program("reduce", total, spec).compile(client)
    measure(lambda i: float(np.asarray(reduce(normalize_host(np.asarray(fresh(x, np.float32(i))))))))
'''


def run(body, env, how, mib, steps, *more):
    out = subprocess.run(
        [sys.executable, "-c", body, how, str(mib), str(steps), *more],
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
    rows = [("in-process JAX, client variant (peer)", run(JAX, in_process, "client", args.mib, args.steps))]

    os.environ.setdefault("PW_BIN_DIR", os.path.join(ROOT, "target", "release"))
    from pw._local import LocalServer

    server = LocalServer(4)
    try:
        proxy = dict(base, JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{server.address}")
        rows.append(("JAX through pw, via the client (fetch, NumPy, upload)", run(JAX, proxy, "client", args.mib, args.steps)))
        rows.append(("JAX through pw, via the sidecar (colocated_python)", run(JAX, proxy, "sidecar", args.mib, args.steps)))
        session = dict(base, PYTHONPATH=os.path.join(ROOT, "frontend", "python"))
        rows.append(("pw session, via the client (two programs)", run(PW, session, "client", args.mib, args.steps, server.address)))
        rows.append(("pw session, via the sidecar (pw.sidecar in one program)", run(PW, session, "sidecar", args.mib, args.steps, server.address)))
    finally:
        server.stop()

    print(f"| {args.mib} MiB float32 over 2 devices: jitted shift, NumPy normalize, jitted sum | ms per step (median of {args.steps}) | loopback bytes per step |")
    print("| --- | ---: | ---: |")
    for name, r in rows:
        print(f"| {name} | {r['ms']:.1f} | {r['bytes'] / 2**20:.2f} MiB |")


if __name__ == "__main__":
    main()
