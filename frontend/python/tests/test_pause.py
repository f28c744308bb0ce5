"""Sessions that pause, resume and resize (``client.pause`` /
``client.resume`` / ``client.resize``), on real pw-server and pw-worker
processes on 127.0.0.1 (ended by PID): the arrays go to storage through
the workers, the devices to the next client, and the session continues
on another slice (other workers, another size) with JAX's numbers."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax.sharding import PartitionSpec as P

import pw
from pw._local import LocalServer
from pw.tools import find_tool

from test_lost_worker import _wait_workers, _Workers
from test_session import assert_workers_hold_nothing, overview


def step(v, x):
    return jnp.tanh(v @ x.T) @ x * 0.5 + v


def descent(meshes: int):
    """One step of `step` on a mesh of 2 devices; with 2 meshes, x passes
    through the other mesh first (the program spans both workers)."""
    with pw.program(f"descent{meshes}") as p:
        v = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        if meshes == 2:
            with pw.mesh("a", devices=2):
                x = jax.jit(lambda a: a * 1.0)(x)
        with pw.mesh("b", devices=2):
            p.outputs(jax.jit(step)(v, x))
    return p


def jax_steps(v, x, n):
    f = jax.jit(step)
    for _ in range(n):
        v = f(v, x)
    return np.asarray(v)


def inputs():
    rng = np.random.default_rng(7)
    return rng.standard_normal((8, 4), dtype=np.float32), rng.standard_normal((8, 4), dtype=np.float32) * 0.3


@pytest.fixture
def cluster(tmp_path):
    """pw-server with two pw-workers of 2 CPU devices each."""
    root = tmp_path / "checkpoints"
    root.mkdir()
    s = LocalServer(2, server_args=["--checkpoint-dir", str(root)])
    try:
        s.add_worker()
    except BaseException:
        s.stop()
        raise
    s.root = str(root)
    yield s
    s.stop()


def session_line(address, session):
    return next(x for x in overview(address)["sessions"] if x["session"] == session)


def paused_checkpoints(root):
    return [e for e in os.listdir(root) if e.startswith(".pw-paused-")]


def test_pause_frees_the_devices_and_resume_continues_with_jaxs_numbers(cluster):
    """Three steps, a pause (the arrays in a checkpoint, the workers
    holding nothing, the devices granted to another client, requests
    refused naming the pause), a resume, three more steps: JAX's six."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(2).compile(client)
        v = v0
        for _ in range(3):
            v = exe(v, x)
        v.block_until_ready()
        compiled = client.stats()["executables_compiled"]

        client.pause()
        assert client.devices == ()
        line = session_line(cluster.address, client.session)
        assert line["state"] == "paused" and line["devices"] == [] and line["device_bytes"] == 0, line
        shown = subprocess.run(
            [find_tool("pw-status"), "--server", cluster.address], capture_output=True, text=True, timeout=30, check=True
        ).stdout
        assert f"SESSION {client.session} " in shown and "(paused)  devices []" in shown, shown
        assert len(paused_checkpoints(cluster.root)) == 1
        assert_workers_hold_nothing(cluster.address)
        refused = exe(v, x)  # dispatched at once; the refusal is on its output
        with pytest.raises(pw.SessionError, match="paused"):
            np.asarray(v)
        with pytest.raises(pw.SessionError, match="paused"):
            client.pause()

        with pw.connect(cluster.address, devices=4, timeout=30) as other:
            assert sorted(other.devices) == [0, 1, 2, 3]
            got = descent(1).compile(other)(v0, x)
            np.testing.assert_allclose(np.asarray(got), jax_steps(v0, x, 1), rtol=1e-6)

        client.resume()
        assert sorted(client.devices) == [0, 1, 2, 3]
        assert session_line(cluster.address, client.session)["state"] == "open"
        with pytest.raises(pw.SessionError, match="paused"):
            np.asarray(refused)
        assert paused_checkpoints(cluster.root) == []
        for _ in range(3):
            v = exe(v, x)
        np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 6), rtol=1e-5)
        stats = client.stats()
        # Lowered again onto the slice; every computation from the caches.
        assert stats["executables_compiled"] == compiled, stats
        with pytest.raises(pw.SessionError, match="not paused"):
            client.resume()


def server_log(cluster) -> str:
    with open(os.path.join(cluster.logs, "pw-server.log")) as f:
        return f.read()


def test_resize_4_to_2_to_4_moves_the_state_device_to_device(cluster):
    """A session of 4 devices resized to 2 and back: its array is laid
    out anew on the devices it has each time, worker to worker (the server
    logs a move, no pause), its executable follows without compiling, the
    devices it gives up go to another client, and the steps give JAX's
    numbers."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(2).compile(client)
        v = exe(v0, x)
        v.block_until_ready()
        compiled = client.stats()["executables_compiled"]

        for impossible in (0, 9):
            with pytest.raises(pw.ProgramError, match="the registered workers offer 4"):
                client.resize(impossible)
        assert session_line(cluster.address, client.session)["state"] == "open"

        client.resize(2)
        assert len(client.devices) == 2
        assert set(v.sharding.devices) <= set(client.devices), (v.sharding, client.devices)
        assert set(exe.inputs[0].devices) <= set(client.devices)
        # The other two devices are free.
        with pw.connect(cluster.address, devices=2, timeout=30) as other:
            assert not set(other.devices) & set(client.devices)
        v = exe(v, x)
        np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 2), rtol=1e-6)

        client.resize(4)
        assert len(client.devices) == 4
        v = exe(v, x)
        np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 3), rtol=1e-5)
        assert client.stats()["executables_compiled"] == compiled
        log = server_log(cluster)
        assert log.count(f"session {client.session} resized from") == 2, log[-3000:]
        assert f"session {client.session} paused" not in log
        assert paused_checkpoints(cluster.root) == []


def test_resizes_and_pauses_back_to_back_keep_the_state(cluster):
    """Rounds of resize(2), resize(4), pause, resume(2), pause, resume(4),
    each at once after the one before, of a session whose state (64 MiB,
    split by rows) lies on the second worker's mesh and a small array on
    the first's, three sessions in turn with another client's in between:
    what a step drops on the workers (the shards a shrink or a pause
    leaves behind) never overtakes what the next step brings (a move back,
    a resume's loads), so every array is there for every step and the last
    gives JAX's numbers. (When a pause's drop could overtake a resume's
    loads, the pause after it waited 600 s for a shard that was gone.)"""
    rows = 16384
    with pw.program("state") as p:
        big = p.input(jax.ShapeDtypeStruct((rows, 1024), jnp.float32))
        small = p.input(jax.ShapeDtypeStruct((8,), jnp.float32))
        with pw.mesh("a", devices=2):
            small = jax.jit(lambda t: t + 1)(small)
        with pw.mesh("b", devices=2):
            big = jax.jit(lambda v: v * 0.5 + 1, in_shardings=P("x"), out_shardings=P("x"))(big)
        p.outputs((big, small))
    host = np.arange(rows * 1024, dtype=np.float32).reshape(rows, 1024) / rows
    for size in (4, 2, 4):
        # Another client's session in between.
        with pw.connect(cluster.address, devices=size) as other:
            np.asarray(p.compile(other)(host, np.zeros(8, np.float32))[1])
        with pw.connect(cluster.address, devices=4) as client:
            exe = p.compile(client)
            big, small = exe(host, np.zeros(8, np.float32))
            for _ in range(3):
                for n in (2, 4):
                    client.resize(n)
                    big.block_until_ready()
                for n in (2, 4):
                    client.pause()
                    client.resume(n)
                    big.block_until_ready()
            big, small = exe(big, small)
            np.testing.assert_array_equal(np.asarray(small), np.full(8, 2, np.float32))
            np.testing.assert_allclose(np.asarray(big), (host * 0.5 + 1) * 0.5 + 1, rtol=1e-6)


def test_a_resize_that_cannot_grow_now_goes_through_storage(cluster):
    """With the devices it would grow into held by another client, a
    resize pauses (the arrays to storage) and waits in line; once they are
    free it resumes on 4 devices with the state."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=2) as client:
        exe = descent(1).compile(client)
        v = exe(v0, x)
        other = pw.connect(cluster.address, devices=2, timeout=30)
        done = []
        t = threading.Thread(target=lambda: done.append(client.resize(4, timeout=60)))
        t.start()
        deadline = time.monotonic() + 30
        while session_line(cluster.address, client.session)["state"] != "resuming":
            assert time.monotonic() < deadline, "the resize never waited in line"
            time.sleep(0.02)
        other.close()
        t.join(60)
        assert done == [None] and len(client.devices) == 4
        np.testing.assert_allclose(np.asarray(exe(v, x)), jax_steps(v0, x, 2), rtol=1e-6)
        assert f"session {client.session} paused" in server_log(cluster)


def test_a_paused_session_resumes_on_another_worker(cluster):
    """Paused, then its second worker dies (SIGKILL) and a new one joins:
    the session resumes on the devices there are, its arrays read back
    from the checkpoint, with JAX's numbers."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(2).compile(client)
        v = exe(exe(v0, x), x)
        v.block_until_ready()
        client.pause()
        cluster.workers[1].kill()
        cluster.workers[1].wait(10)
        _wait_workers(cluster.address, 1)
        extra = _Workers(cluster)
        try:
            extra.start()
            _wait_workers(cluster.address, 2)
            client.resume(timeout=30)
            assert len(client.devices) == 4 and max(client.devices) >= 4, client.devices
            v = exe(v, x)
            np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 3), rtol=1e-5)
        finally:
            extra.stop()


def test_resume_waits_in_line_and_a_closed_paused_session_leaves_nothing(cluster):
    """While another client holds every device, a resume with a timeout
    raises DevicesBusyError and the session stays paused; once they are
    free it resumes. A session closed while paused removes its
    checkpoint."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(1).compile(client)
        v = exe(v0, x)
        client.pause()
        other = pw.connect(cluster.address, devices=4, timeout=30)
        try:
            with pytest.raises(pw.DevicesBusyError):
                client.resume(timeout=1)
            assert session_line(cluster.address, client.session)["state"] == "paused"
            with pytest.raises(pw.SessionError, match="paused"):
                v.block_until_ready()
        finally:
            other.close()
        client.resume(timeout=30)
        np.testing.assert_allclose(np.asarray(exe(v, x)), jax_steps(v0, x, 2), rtol=1e-6)

        client.pause()
        assert len(paused_checkpoints(cluster.root)) == 1
    # The server hears of the close after `close()` returns.
    deadline = time.monotonic() + 10
    while paused_checkpoints(cluster.root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert paused_checkpoints(cluster.root) == []
    assert_workers_hold_nothing(cluster.address)


def test_a_worker_lost_while_the_session_pauses_fails_the_pause_and_nothing_else(cluster):
    """The second worker hangs (SIGSTOP) as the pause begins, then dies:
    the pause raises naming it, the session stays open with no checkpoint
    left, and once a new worker joins the loop goes on with JAX's numbers
    (the arrays that were on the dead worker computed again from their
    lineage)."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(2).compile(client)
        v = exe(exe(v0, x), x)
        v.block_until_ready()
        second = cluster.workers[1]
        second.send_signal(signal.SIGSTOP)
        failure = []

        def pause():
            try:
                client.pause()
            except pw.PwError as e:
                failure.append(e)

        t = threading.Thread(target=pause)
        t.start()
        deadline = time.monotonic() + 30
        while not paused_checkpoints(cluster.root):
            assert time.monotonic() < deadline, "the pause never started writing"
            time.sleep(0.01)
        second.kill()
        second.wait(10)
        t.join(60)
        assert not t.is_alive(), "the pause did not end"
        assert len(failure) == 1 and isinstance(failure[0], pw.RunError), failure
        assert "could not save" in str(failure[0]), failure[0]
        assert session_line(cluster.address, client.session)["state"] == "open"
        assert paused_checkpoints(cluster.root) == []
        extra = _Workers(cluster)
        try:
            extra.start()
            _wait_workers(cluster.address, 2)
            v = exe(v, x)
            np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 3), rtol=1e-5)
        finally:
            extra.stop()
