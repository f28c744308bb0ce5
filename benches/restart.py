"""A pw-server restarted from its journal (`--state-dir`) against a job
that restarts, as one table (docs/benchmarks.md, "Controller restart"):

    .venv/bin/python benches/restart.py [--mib 256] [--repeats 3]

Needs the release binaries (`cargo build --release -p pw-tools -p
pw-worker`). Two pw-workers of 2 CPU devices each and a pw-server on
127.0.0.1 (started and ended by PID). A session of the 4 devices runs a
training-like step: the state (--mib MiB of float32, split by rows over
the 4 devices, donated) is updated and its sum read back each step, as a
loop reads its loss. After a few steps the server is SIGKILLed and started
again at its address:

* pw, with a journal: the same client goes on; the figure is from the kill
  to the first step done after it (the call and the read of its sum), and
  from the new server listening to that step; the arrays kept and lost,
  and the compiles it cost, are counted.
* pw, the server and one of the session's workers killed together (as when
  a host is lost; a third, spare worker is there): the restarted server
  waits --reattach-workers-s (1 s here) for the lost worker, tops the slice
  up from the spare one, and computes the lost half of the state again from
  the lineage its journal kept. Here the state is made on the devices by an
  `init` program from a seed, as a training job makes its parameters (an
  upload larger than 4 MiB goes straight to the workers and has no lineage,
  docs/cluster.md); the calls replayed and the arrays recomputed are
  counted.
* the peer, a job that restarts (the server without a journal): the
  client's session is gone; a new client opens a session, compiles, puts
  the state back from a copy in host memory (the best a restarted job can
  do: no checkpoint read) and runs the step. Same two figures.

Each figure is the median of --repeats kills, each on a fresh cluster.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import pw
from pw._local import LocalServer


def program(rows: int):
    """The state in two halves, each on a mesh of one worker's 2 devices
    (a mesh lies on one worker), split by rows; each step returns the new
    halves and their sums."""
    half = jax.ShapeDtypeStruct((rows // 2, 1024), jnp.float32)
    step = jax.jit(lambda v: (v * 0.999 + 0.5, jnp.sum(v)), in_shardings=P("x"), out_shardings=(P("x"), P()))
    with pw.program("train") as p:
        halves = [p.input(half) for _ in range(2)]
        outs = []
        for name, v in zip("ab", halves):
            with pw.mesh(name, devices=2):
                outs.append(step(v))
        p.outputs((outs[0][0], outs[1][0], outs[0][1], outs[1][1]))
    return p


def init_program(rows: int):
    """The state's two halves made on their meshes from a seed."""
    seed = jax.ShapeDtypeStruct((), jnp.float32)
    ramp = jax.jit(
        lambda s: s + jnp.arange(rows // 2 * 1024, dtype=jnp.float32).reshape(rows // 2, 1024) * 1e-7,
        out_shardings=P("x"),
    )
    with pw.program("init") as p:
        s = p.input(seed)
        outs = []
        for name in "ab":
            with pw.mesh(name, devices=2):
                outs.append(ramp(s))
        p.outputs(tuple(outs))
    return p


def loop(exe, state, steps):
    for _ in range(steps):
        a, b, la, lb = exe(*state)
        state = (a, b)
        float(np.asarray(la)) + float(np.asarray(lb))
    return state


def one(rows: int, host: np.ndarray, mode: str) -> dict:
    """One kill and restart; its figures. `mode`: "pw" (the server killed),
    "pw-host" (the server and a worker killed) or "peer"."""
    journal = mode != "peer"
    args = ["--state-dir", tempfile.mkdtemp(prefix="pw-bench-state-")] if journal else []
    if mode == "pw-host":
        args += ["--reattach-workers-s", "1"]
    server = LocalServer(2, server_args=args)
    try:
        server.add_worker()
        if mode == "pw-host":
            server.add_worker()
        p = program(rows)
        client = pw.connect(server.address, devices=4)
        exe = p.compile(client, donate_argnums=(0, 1))
        if mode == "pw-host":
            v = init_program(rows).compile(client)(np.float32(0.25))
        else:
            v = host
        v = loop(exe, v, 3)
        started = time.perf_counter()
        v = loop(exe, v, 3)
        step = (time.perf_counter() - started) / 3
        if mode == "pw-host":
            # The journal writes a call's lineage within milliseconds of it.
            time.sleep(0.2)
        killed = time.perf_counter()
        if mode == "pw-host":
            # The server first, so that it never hears of the worker's end.
            server.server.kill()
            server.server.wait(10)
            server.workers[1].kill()
            server.workers[1].wait(10)
        server.restart_server(kill=True)
        listening = time.perf_counter()
        if journal:
            loop(exe, v, 1)
            done = time.perf_counter()
            stats = client.stats()
            # The counters of a restored session count from the restart.
            out = {
                "kept": len(client._origins),
                "lost": len(client._lost),
                "compiles": stats["executables_compiled"],
                "recomputed": stats["arrays_recomputed"],
                "replayed": stats["calls_replayed"],
            }
            client.close()
        else:
            try:
                client.close()
            except pw.PwError:
                pass
            # The job's new session, once the workers registered again.
            deadline = time.monotonic() + 60
            while True:
                try:
                    fresh = pw.connect(server.address, devices=4, timeout=60)
                    break
                except pw.ProgramError as e:
                    if "workers offer" not in str(e) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)
            exe = p.compile(fresh, donate_argnums=(0, 1))
            loop(exe, host, 1)
            done = time.perf_counter()
            out = {"kept": 0, "lost": 2, "compiles": fresh.stats()["executables_compiled"], "recomputed": 0, "replayed": 0}
            fresh.close()
        out.update(step=step, kill_to_step=done - killed, listening_to_step=done - listening, restart=listening - killed)
        return out
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=256, help="the state (MiB of float32; default 256)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = args.mib * (1 << 20) // (4 * 1024)
    rows -= rows % 8
    rng = np.random.default_rng(0)
    host = tuple(rng.standard_normal((rows // 2, 1024), dtype=np.float32) for _ in range(2))
    modes = ("pw", "pw-host", "peer")
    runs = {mode: [one(rows, host, mode) for _ in range(args.repeats)] for mode in modes}

    def row(label, cell):
        print(f"| {label} | " + " | ".join(cell(mode) for mode in modes) + " |")

    def ms(key):
        return lambda mode: f"{statistics.median(r[key] for r in runs[mode]) * 1e3:.0f} ms"

    def each(fmt):
        return lambda mode: ", ".join(fmt(r) for r in runs[mode])

    print(f"state: {rows * 1024 * 4 / 2**20:.0f} MiB of float32 over 4 devices (2 workers); median of {args.repeats} kills")
    print()
    print(
        "| after a SIGKILL of pw-server | pw, `--state-dir` (the session taken back) "
        "| pw, the server and one of the session's workers killed (state made on the devices, computed again) "
        "| peer: the job restarts (new session, compile, state put back from host memory) |"
    )
    print("| --- | ---: | ---: | ---: |")
    row("a step without a fault (the call and the read of its sums)", ms("step"))
    row("kill to the first step done after it", ms("kill_to_step"))
    row("new server listening to that step", ms("listening_to_step"))
    row("of which: the server's start (kill to listening)", ms("restart"))
    row("arrays the client held: kept / lost", each(lambda r: f"{r['kept']} / {r['lost']}"))
    row("arrays computed again from their lineage (calls replayed)", each(lambda r: f"{r['recomputed']} ({r['replayed']})"))
    row("executables compiled after the kill", each(lambda r: str(r["compiles"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
