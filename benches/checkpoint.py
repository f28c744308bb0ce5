"""Checkpoints written and read by the workers (`client.save` /
`client.load`) beside the same bytes through the client, as one table
(docs/benchmarks.md, "Checkpoints"):

    .venv/bin/python benches/checkpoint.py [--mib 1024] [--repeats 3]

Needs the release binaries (`cargo build --release --bins`) and TensorStore
(installed by scripts/test.sh). A pw-server with two pw-workers of 2 CPU
devices each on 127.0.0.1 (started and ended by PID), a session of the 4
devices holding --mib MiB of float32 state: two arrays, one on each
worker's two devices, split by rows (a mesh lies on one worker), the
checkpoint directory in a fresh temporary directory. Each row is the best of --repeats:

* pw save: `client.save` (each worker writes and syncs its shards);
* pw load: `client.load` onto the same layout (each worker reads its
  shards from the files the save wrote, likely in the page cache);
* through the client: `np.asarray` of the array (a direct fetch from the
  workers), then TensorStore writing it as zarr v3 with the same chunks
  and syncing every file; and back: TensorStore reading it, then a call
  taking it as a numpy argument (a direct put to the workers);
* Orbax through the proxy (the issue's peer): a fresh process of
  unmodified JAX (`JAX_PLATFORMS=proxy`) against the same cluster puts the
  same two arrays on the same devices, then `ocp.StandardCheckpointer`
  saves them (every file synced after, as above) and restores them onto
  the same shardings; Orbax fetches and puts every shard through the
  client, and the proxy's bulk bytes through pw-server;
* the floor: this process writing the same bytes to one file and syncing
  it, and reading them back.

Then a resize (`--resize-mib`, default 256 MiB of state): a session of the
4 devices runs a program of two 2-device meshes whose state (one float32
array split by rows) lies on the second worker's mesh; it is resized to 2
devices (both meshes on the first worker: the state moves worker to
worker) and back to 4 (it moves back), each the best of --repeats, two
ways: `client.resize` (device to device, the program lowered again; the
compiles counted) and `client.pause()` + `client.resume(n)` (through the
checkpoint directory). The peer is the same move by hand: fetch the
state, close the session, open one of the new size, compile, and call with
the state as a numpy argument.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import pw
from pw._local import LocalServer, _env
from pw.tools import find_tool


def best(f, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def sync_tree(path):
    for dirpath, _, files in os.walk(path):
        for name in files:
            with open(os.path.join(dirpath, name), "rb+") as f:
                os.fsync(f.fileno())
        fd = os.open(dirpath, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)


ORBAX = r"""
import json, os, sys, time
import numpy as np, jax, jax.numpy as jnp
import orbax.checkpoint as ocp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
sys.path.insert(0, sys.argv[4])
from checkpoint import sync_tree
rows, root, repeats = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
devices = jax.devices()
on = [NamedSharding(Mesh(np.array(devices[2 * i : 2 * i + 2]), ("x",)), P("x")) for i in range(2)]
rng = np.random.default_rng(0)
tree = {name: jax.device_put(rng.standard_normal((rows // 2, 1024), dtype=np.float32), s) for name, s in zip("ab", on)}
jax.block_until_ready(tree)
target = {name: jax.ShapeDtypeStruct((rows // 2, 1024), jnp.float32, sharding=s) for name, s in zip("ab", on)}
checkpointer = ocp.StandardCheckpointer()
save, load = [], []
for i in range(repeats):
    path = os.path.join(root, f"orbax{i}")
    t = time.perf_counter()
    checkpointer.save(path, tree)
    checkpointer.wait_until_finished()
    sync_tree(path)
    save.append(time.perf_counter() - t)
    t = time.perf_counter()
    got = checkpointer.restore(path, target)
    jax.block_until_ready(got)
    load.append(time.perf_counter() - t)
    assert np.array_equal(np.asarray(got["b"][:2]), np.asarray(tree["b"][:2]))
    del got
print(json.dumps({"save": min(save), "load": min(load)}))
"""


def orbax_through_proxy(address, rows, root, repeats):
    """Orbax's save and restore, best of `repeats`, in a fresh process of
    unmodified JAX through pw's proxy (see the module doc)."""
    env = _env()
    env.pop("XLA_FLAGS", None)
    env.update(JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{address}")
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run(
        [sys.executable, "-c", ORBAX, str(rows), root, str(repeats), here],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Orbax through the proxy failed:\n{done.stderr[-4000:]}")
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return times["save"], times["load"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=1024, help="size of the array (MiB; default 1024)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--resize-mib", type=int, default=256, help="state of the resize rows (MiB; default 256)")
    args = parser.parse_args()
    import tensorstore as ts

    rows = args.mib * (1 << 20) // (4 * 1024)
    rows -= rows % 4
    shape = (rows, 1024)
    nbytes = rows * 1024 * 4
    root = tempfile.mkdtemp(prefix="pw-bench-checkpoints-")
    server = LocalServer(2, server_args=["--checkpoint-dir", root])
    second = subprocess.Popen(
        [find_tool("pw-worker"), "--controller", server.address, "--devices", "2", "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    try:
        from test_lost_worker import _wait_workers  # noqa: E402  (frontend/python/tests)

        _wait_workers(server.address, 2)
        half = (rows // 2, 1024)
        with pw.program("state") as p:
            xs = [p.input(jax.ShapeDtypeStruct(half, jnp.float32)) for _ in range(2)]
            outs = []
            for name, x in zip("ab", xs):
                with pw.mesh(name, devices=2):
                    outs.append(jax.jit(lambda v: v + 1, in_shardings=P("x"), out_shardings=P("x"))(x))
            p.outputs(tuple(outs))
        rng = np.random.default_rng(0)
        host = [rng.standard_normal(half, dtype=np.float32) for _ in range(2)]
        with pw.connect(server.address, devices=4) as client:
            exe = p.compile(client)
            state = dict(zip(("a", "b"), exe(*host)))
            for a in state.values():
                a.block_until_ready()
            assert {min(a.sharding.devices) // 2 for a in state.values()} == {0, 1}, "one array per worker"

            save = best(lambda: client.save("bench", state), args.repeats)
            loaded = []

            def load():
                loaded.append(client.load("bench", {"a": exe.input(0), "b": exe.input(1)}))

            load_s = best(load, args.repeats)
            np.testing.assert_array_equal(np.asarray(loaded[-1]["b"])[:2], host[1][:2] + 1)
            loaded.clear()

            def spec(name, create):
                s = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(root, "client", name)}}
                if create:
                    chunks = {"name": "regular", "configuration": {"chunk_shape": [half[0] // 2, 1024]}}
                    s["metadata"] = {"shape": list(half), "data_type": "float32", "chunk_grid": chunks}
                return s

            def through_client_save():
                shutil.rmtree(os.path.join(root, "client"), ignore_errors=True)
                for name, a in state.items():
                    t = ts.open(spec(name, True), create=True, delete_existing=True).result()
                    t.write(np.asarray(a)).result()
                sync_tree(os.path.join(root, "client"))

            def through_client_load():
                got = [ts.open(spec(name, False)).result().read().result() for name in state]
                for a in exe(*got):
                    a.block_until_ready()

            client_save = best(through_client_save, args.repeats)
            client_load = best(through_client_load, args.repeats)

            raw = os.path.join(root, "raw.bin")
            data = np.concatenate([np.asarray(a) for a in state.values()])

            def floor_write():
                with open(raw, "wb") as f:
                    f.write(memoryview(data).cast("B"))
                    f.flush()
                    os.fsync(f.fileno())

            def floor_read():
                with open(raw, "rb") as f:
                    np.frombuffer(f.read(), dtype=np.float32)

            write_floor = best(floor_write, args.repeats)
            read_floor = best(floor_read, args.repeats)

        orbax_save, orbax_load = orbax_through_proxy(server.address, rows, root, args.repeats)
        resize_rows = resize(server.address, args.resize_mib, args.repeats)
        gb = nbytes / 1e9
        rows_out = [
            ("save", save, client_save, orbax_save, write_floor),
            ("load", load_s, client_load, orbax_load, read_floor),
        ]
        print(f"checkpoint of 2 x float32{list(half)} ({nbytes / (1 << 20):.0f} MiB), one array on each of 2 workers x 2 devices, best of {args.repeats}")
        print("| measure | pw (workers) | through the client (TensorStore) | Orbax through the proxy | one file in this process |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, *times in rows_out:
            print(f"| {name} | " + " | ".join(f"{gb / t:.2f} GB/s ({t:.2f} s)" for t in times) + " |")
        print()
        print(f"resize of a session holding float32 state of {args.resize_mib} MiB (rows over a 2-device mesh), best of {args.repeats}")
        print("| resize | pw: `client.resize`, device to device (compiles) | pw: pause + resume, through storage | by hand: fetch, reconnect, compile, upload |")
        print("| --- | ---: | ---: | ---: |")
        for name, ours, compiled, stored, theirs in resize_rows:
            print(f"| {name} | {ours:.3f} s ({compiled} compiled) | {stored:.3f} s | {theirs:.3f} s |")
    finally:
        if second.poll() is None:
            second.kill()
            second.wait(10)
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def resize(address, mib, repeats):
    """The resize rows (see the module doc): (name, pw s, compiles, pw
    through storage s, by hand s)."""
    rows = mib * (1 << 20) // (4 * 1024)
    rows -= rows % 2
    shape = (rows, 1024)
    with pw.program("resize_state") as p:
        x = p.input(jax.ShapeDtypeStruct(shape, jnp.float32))
        t = p.input(jax.ShapeDtypeStruct((8,), jnp.float32))
        with pw.mesh("a", devices=2):
            t2 = jax.jit(lambda v: v + 1)(t)
        with pw.mesh("b", devices=2):
            y = jax.jit(lambda v: v + 1, in_shardings=P("x"), out_shardings=P("x"))(x)
        p.outputs((y, t2))
    host = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    tiny = np.zeros(8, np.float32)
    moved = {2: [], 4: []}
    stored = {2: [], 4: []}
    compiled = {2: 0, 4: 0}
    with pw.connect(address, devices=4) as client:
        exe = p.compile(client)
        state, _ = exe(host, tiny)
        state.block_until_ready()
        # On the second worker: a resize to 2 devices moves it to the first.
        assert min(state.sharding.devices) >= 2, state.sharding
        for _ in range(repeats):
            for n in (2, 4):
                before = client.stats()["executables_compiled"]
                t0 = time.perf_counter()
                client.resize(n)
                state.block_until_ready()
                moved[n].append(time.perf_counter() - t0)
                compiled[n] += client.stats()["executables_compiled"] - before
                assert len(client.devices) == n
            for n in (2, 4):
                t0 = time.perf_counter()
                client.pause()
                client.resume(n)
                state.block_until_ready()
                stored[n].append(time.perf_counter() - t0)
        np.testing.assert_array_equal(np.asarray(state)[:2], host[:2] + 1)

    def by_hand(start, n):
        client = pw.connect(address, devices=start)
        try:
            s, _ = p.compile(client)(host, tiny)
            s.block_until_ready()
            t0 = time.perf_counter()
            got = np.asarray(s)
            client.close()
            client = pw.connect(address, devices=n)
            again, _ = p.compile(client)(got, tiny)
            again.block_until_ready()
            return time.perf_counter() - t0
        finally:
            client.close()

    return [
        ("4 -> 2 devices", min(moved[2]), compiled[2], min(stored[2]), min(by_hand(4, 2) for _ in range(repeats))),
        ("2 -> 4 devices", min(moved[4]), compiled[4], min(stored[4]), min(by_hand(2, 4) for _ in range(repeats))),
    ]


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "frontend", "python", "tests"))
    main()
