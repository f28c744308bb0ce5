"""Sessions' checkpoints (``client.save`` / ``client.load``): written and
read by the workers holding the shards (real pw-server and pw-worker
processes on 127.0.0.1, ended by PID), in zarr v3. TensorStore reads pw's
checkpoints; pw loads Orbax's (``use_zarr3``, no OCDBT) and its own onto
other shardings, with JAX's values. Faults: a worker lost while it writes,
a worker whose disk is full, a truncated chunk; the old checkpoint stays
valid and nothing half-written is left. Orbax's own restore opens what pw
wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pw
from pw._local import LocalServer, _env
from pw.tools import find_tool

from test_lost_worker import _wait_workers


def _library(name: str):
    """TensorStore or Orbax: required where scripts/test.sh installed them
    (PW_REQUIRE_CHECKPOINT_LIBS), else the tests that need them skip."""
    if os.environ.get("PW_REQUIRE_CHECKPOINT_LIBS"):
        import importlib

        return importlib.import_module(name)
    return pytest.importorskip(name)


ts = _library("tensorstore")


def rows_then_columns():
    """Two programs: x*2 split by rows over 2 devices; x+1 split by
    columns over 4."""
    with pw.program("rows") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 12), jnp.float32))
        with pw.mesh("m", devices=2):
            p.outputs(jax.jit(lambda v: v * 2, in_shardings=P("x"), out_shardings=P("x"))(x))
    with pw.program("columns") as q:
        x = q.input(jax.ShapeDtypeStruct((8, 12), jnp.float32))
        with pw.mesh("m", devices=4):
            q.outputs(jax.jit(lambda v: v + 1, in_shardings=P(None, "x"), out_shardings=P(None, "x"))(x))
    return p, q


def two_workers_outputs(n: int):
    """y on mesh a (the first worker), z on mesh b (the second), both
    float32[n, n] split by rows."""
    with pw.program("two_workers") as p:
        x = p.input(jax.ShapeDtypeStruct((n, n), jnp.float32))
        with pw.mesh("a", devices=2):
            y = jax.jit(lambda v: v * 2.0)(x)
        with pw.mesh("b", devices=2):
            z = jax.jit(lambda v: v + 1.0)(x)
        p.outputs((y, z))
    return p


def hidden(directory: str) -> list[str]:
    """Entries of `directory` a save leaves only while it runs."""
    return sorted(e for e in os.listdir(directory) if e.startswith("."))


def read_with_tensorstore(path: str) -> np.ndarray:
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
    return ts.open(spec).result().read().result()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("checkpoints"))
    s = LocalServer(4, server_args=["--checkpoint-dir", root])
    s.root = root
    yield s
    s.stop()


def test_workers_write_a_checkpoint_tensorstore_reads_and_pw_loads_resharded(server):
    """Rows over 2 devices, saved: a zarr v3 group whose array TensorStore
    reads as numpy's x*2, written without a byte through the server. Loaded
    as the column split over 4 devices another program takes, it gives
    JAX's result. Saving again replaces it whole."""
    rows, columns = rows_then_columns()
    x = np.arange(96, dtype=np.float32).reshape(8, 12)
    with pw.connect(server.address, devices=4) as client:
        by_rows, by_columns = rows.compile(client), columns.compile(client)
        y = by_rows(x)
        before = client.stats()
        client.save("run/step1", {"w": y})
        after = client.stats()
        assert after["bytes_from_workers"] == before["bytes_from_workers"], (before, after)
        assert after["bytes_to_client"] == before["bytes_to_client"], (before, after)
        step1 = os.path.join(server.root, "run", "step1")
        np.testing.assert_array_equal(read_with_tensorstore(os.path.join(step1, "w")), x * 2)
        # One chunk per distinct shard, written where it lay.
        assert sorted(os.listdir(os.path.join(step1, "w", "c"))) == ["0", "1"]

        got = client.load("run/step1", {"w": by_columns.input(0)})["w"]
        assert got.sharding.devices == (0, 1, 2, 3), got.sharding
        want = jax.jit(lambda v: v + 1)(jax.jit(lambda v: v * 2)(x))
        np.testing.assert_array_equal(np.asarray(by_columns(got)), np.asarray(want))

        client.save("run/step1", {"w": by_rows(x + 1)})
        np.testing.assert_array_equal(read_with_tensorstore(os.path.join(step1, "w")), (x + 1) * 2)
        assert hidden(os.path.join(server.root, "run")) == []


def test_an_orbax_checkpoint_loads_into_a_session(server):
    """Orbax (in-process JAX, zarr3 without OCDBT: zstd-compressed inner
    chunks in zarr shards, a CRC-32C index) writes a pytree sharded over 4
    devices; pw loads its leaves onto its own layouts, and a program on them
    gives JAX's result on the same leaves."""
    _library("orbax.checkpoint")
    script = r"""
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import numpy as np, jax, jax.numpy as jnp
import orbax.checkpoint as ocp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
rng = np.random.default_rng(3)
w = jax.device_put(rng.standard_normal((16, 8), dtype=np.float32), NamedSharding(mesh, P("x")))
b = jnp.asarray(rng.standard_normal(8, dtype=np.float32)).astype(jnp.bfloat16)
tree = {"params": {"w": w, "b": b}, "step": jnp.int32(7)}
ocp.PyTreeCheckpointer(use_ocdbt=False, use_zarr3=True).save(sys.argv[1], tree)
np.save(sys.argv[1] + ".w.npy", np.asarray(w))
np.save(sys.argv[1] + ".b.npy", np.asarray(b.astype(jnp.float32)))
"""
    target = os.path.join(server.root, "orbax", "c1")
    subprocess.run([sys.executable, "-c", script, target], check=True, timeout=300, env=_env())
    w = np.load(target + ".w.npy")
    b = np.load(target + ".b.npy").astype(jnp.bfloat16)

    def f(w, b, step):
        return jnp.tanh(w @ b.astype(jnp.float32)) * step

    with pw.program("orbax_user") as p:
        args = (
            p.input(jax.ShapeDtypeStruct((16, 8), jnp.float32)),
            p.input(jax.ShapeDtypeStruct((8,), jnp.bfloat16)),
            p.input(jax.ShapeDtypeStruct((), jnp.int32)),
        )
        with pw.mesh("m", devices=2):
            p.outputs(jax.jit(f, in_shardings=(P(None, "x"), P(), P()))(*args))
    with pw.connect(server.address, devices=4) as client:
        exe = p.compile(client)
        loaded = client.load("orbax/c1", {"params.w": exe.input(0), "params.b": exe.input(1), "step": exe.input(2)})
        np.testing.assert_array_equal(np.asarray(loaded["params.w"]), w)
        got = exe(loaded["params.w"], loaded["params.b"], loaded["step"])
        np.testing.assert_allclose(np.asarray(got), np.asarray(jax.jit(f)(w, b, jnp.int32(7))), rtol=1e-6)


def test_orbax_restores_a_checkpoint_pw_wrote(server):
    """pw saves a tree's leaves by their Orbax names (`params.w` split by
    rows over 2 devices, `params.b` in bfloat16, a scalar `step`); Orbax's
    StandardCheckpointer (in-process JAX, 4 devices) restores it onto its
    own shardings, and with no target as NumPy arrays, with the values
    pw's program computed."""
    _library("orbax.checkpoint")
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((16, 8), dtype=np.float32)
    b0 = rng.standard_normal(8, dtype=np.float32).astype(jnp.bfloat16)
    with pw.program("make_tree") as p:
        w, b, step = (
            p.input(jax.ShapeDtypeStruct((16, 8), jnp.float32)),
            p.input(jax.ShapeDtypeStruct((8,), jnp.bfloat16)),
            p.input(jax.ShapeDtypeStruct((), jnp.int32)),
        )
        with pw.mesh("m", devices=2):
            p.outputs(
                jax.jit(
                    lambda w, b, s: (w * 2, b + 1, s + 1),
                    in_shardings=(P("x"), P(), P()),
                    out_shardings=(P("x"), P(), P()),
                )(w, b, step)
            )
    with pw.connect(server.address, devices=4) as client:
        w, b, step = p.compile(client)(w0, b0, np.int32(41))
        client.save("for_orbax", {"params.w": w, "params.b": b, "step": step})
    script = r"""
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import numpy as np, jax, jax.numpy as jnp
import orbax.checkpoint as ocp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
on = lambda spec: NamedSharding(mesh, spec)
target = {
    "params": {
        "w": jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=on(P(None, "x"))),
        "b": jax.ShapeDtypeStruct((8,), jnp.bfloat16, sharding=on(P())),
    },
    "step": jax.ShapeDtypeStruct((), jnp.int32, sharding=on(P())),
}
got = ocp.StandardCheckpointer().restore(sys.argv[1], target)
assert got["params"]["w"].sharding == on(P(None, "x")), got["params"]["w"].sharding
plain = ocp.StandardCheckpointer().restore(sys.argv[1])
assert sorted(plain) == ["params", "step"] and sorted(plain["params"]) == ["b", "w"], plain
np.save(sys.argv[2] + ".w.npy", np.asarray(got["params"]["w"]))
np.save(sys.argv[2] + ".b.npy", np.asarray(got["params"]["b"].astype(jnp.float32)))
np.save(sys.argv[2] + ".step.npy", np.asarray(got["step"]))
np.save(sys.argv[2] + ".plain_w.npy", np.asarray(plain["params"]["w"]))
"""
    out = os.path.join(server.root, "orbax_read")
    path = os.path.join(server.root, "for_orbax")
    subprocess.run([sys.executable, "-c", script, path, out], check=True, timeout=300, env=_env())
    np.testing.assert_array_equal(np.load(out + ".w.npy"), w0 * 2)
    np.testing.assert_array_equal(np.load(out + ".plain_w.npy"), w0 * 2)
    np.testing.assert_array_equal(np.load(out + ".b.npy"), np.asarray((b0 + 1).astype(np.float32)))
    assert int(np.load(out + ".step.npy")) == 42


def test_bad_checkpoints_and_names_are_clear_errors(server):
    """A name outside the checkpoint directory, a missing array, a type
    that does not match, and a truncated chunk: each refused naming what
    and where; the session goes on and no array is left behind."""
    rows, columns = rows_then_columns()
    x = np.arange(96, dtype=np.float32).reshape(8, 12)
    with pw.connect(server.address, devices=4) as client:
        by_rows, by_columns = rows.compile(client), columns.compile(client)
        y = by_rows(x)
        for path in ("../outside", "/abs", "a/../b", ".hidden", ""):
            with pytest.raises(pw.ProgramError, match="a checkpoint is named by a relative path"):
                client.save(path, {"w": y})
        with pytest.raises(pw.ProgramError, match="not a plain name"):
            client.save("bad", {"../w": y})
        client.save("bad", {"w": y})
        with pytest.raises(pw.ProgramError, match=r"checkpoint bad: zarr .*bad/nope/zarr.json: cannot open"):
            client.load("bad", {"nope": by_columns.input(0)})
        with pw.program("ints") as q:
            v = q.input(jax.ShapeDtypeStruct((8, 12), jnp.int32))
            with pw.mesh("m", devices=2):
                q.outputs(jax.jit(lambda a: a + 1)(v))
        ints = q.compile(client)
        with pytest.raises(pw.ProgramError, match=r"w is float32\[8, 12\]; input 0 of ints is int32\[8, 12\]"):
            client.load("bad", {"w": ints.input(0)})
        live = client.stats()["arrays_live"]
        chunk = os.path.join(server.root, "bad", "w", "c", "1", "0")
        with open(chunk, "r+b") as f:
            f.truncate(100)
        with pytest.raises(pw.RunError, match=r"could not load w onto device \d: zarr .*bad/w/c/1/0: a chunk of 100 bytes; a float32\[4, 12\] chunk has 192"):
            client.load("bad", {"w": by_columns.input(0)})
        assert client.stats()["arrays_live"] == live
        np.testing.assert_array_equal(np.asarray(by_columns(by_rows(x))), x * 2 + 1)


_START_LIMITED = r"""
import os, resource, signal, sys
# A full disk, as the worker sees it: writes past the limit fail (EFBIG)
# instead of killing it.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
os.execv(sys.argv[2], sys.argv[2:])
"""


@pytest.mark.parametrize("fault", ["worker_killed", "disk_full"])
def test_a_failed_save_leaves_the_old_checkpoint_as_it_was(tmp_path, fault):
    """Two workers, a checkpoint saved; then a second save of the same path
    fails on the second worker (killed while it writes, or its disk full
    for a larger shard): the save raises naming the worker and the array,
    the first checkpoint still reads as it was, and no partial directory is
    left."""
    root = str(tmp_path)
    server = LocalServer(2, server_args=["--checkpoint-dir", root])
    second = None
    log = open(os.path.join(server.logs, "worker-2.log"), "w")
    try:
        worker = [find_tool("pw-worker"), "--controller", server.address, "--devices", "2", "--listen", "127.0.0.1:0"]
        if fault == "disk_full":
            # Files of at most 4 KiB: a 16x16 array's shard (512 bytes)
            # fits, a 64x64 one's (8 KiB) does not.
            worker = [sys.executable, "-c", _START_LIMITED, "4096", *worker]
        second = subprocess.Popen(worker, stdout=subprocess.DEVNULL, stderr=log, env=_env())
        _wait_workers(server.address, 2)
        small = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
        big = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
        with pw.connect(server.address, devices=4) as client:
            y, z = two_workers_outputs(16).compile(client)(small)
            assert min(z.sharding.devices) >= 2, z.sharding
            client.save("ck", {"y": y, "z": z})
            if fault == "disk_full":
                y2, z2 = two_workers_outputs(64).compile(client)(big)
                with pytest.raises(pw.RunError, match=r"worker \d+ could not save z: .*File too large"):
                    client.save("ck", {"y": y2, "z": z2})
            else:
                y2, z2 = two_workers_outputs(16).compile(client)(small + 1)
                z2.block_until_ready()
                second.send_signal(signal.SIGSTOP)
                failure = []

                def save():
                    try:
                        client.save("ck", {"y": y2, "z": z2})
                    except pw.PwError as e:
                        failure.append(e)

                t = threading.Thread(target=save)
                t.start()
                # The save is under way (its partial directory exists) ...
                deadline = time.monotonic() + 30
                while not hidden(root):
                    assert time.monotonic() < deadline, "the save never started"
                    time.sleep(0.01)
                # ... when the worker holding z dies.
                second.kill()
                second.wait(10)
                t.join(60)
                assert not t.is_alive(), "the save did not end"
                assert len(failure) == 1 and isinstance(failure[0], pw.RunError), failure
                assert "could not save z" in str(failure[0]), failure[0]
        np.testing.assert_array_equal(read_with_tensorstore(os.path.join(root, "ck", "y")), small * 2)
        np.testing.assert_array_equal(read_with_tensorstore(os.path.join(root, "ck", "z")), small + 1)
        assert hidden(root) == []
    finally:
        if second is not None and second.poll() is None:
            second.kill()
            second.wait(10)
        log.close()
        server.stop()
