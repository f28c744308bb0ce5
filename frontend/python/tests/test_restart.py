"""A pw-server that restarts from its journal (``--state-dir``) without
losing work, on real pw-server and pw-worker processes on 127.0.0.1
(ended by PID): the server is SIGKILLed under a training loop and started
again at its address; the workers keep the session's arrays and register
again, the client takes its session back, and the loop ends with JAX's
numbers. A journal that cannot be read is refused, naming it."""

from __future__ import annotations

import os
import subprocess
import re
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pw
from pw._local import LocalServer
from pw.tools import find_tool

from test_pause import descent, inputs, jax_steps
from test_session import overview


@pytest.fixture
def cluster(tmp_path):
    """pw-server with a journal, and two pw-workers of 2 CPU devices."""
    state, checkpoints = tmp_path / "state", tmp_path / "checkpoints"
    checkpoints.mkdir()
    s = LocalServer(2, server_args=["--state-dir", str(state), "--checkpoint-dir", str(checkpoints)])
    try:
        s.add_worker()
    except BaseException:
        s.stop()
        raise
    s.state = state
    yield s
    s.stop()


def restart_soon(cluster, after: float = 0.3):
    """SIGKILLs the cluster's server `after` seconds from now and starts it
    again (in a thread); the thread, and an event set once it is back."""
    restarted = threading.Event()

    def kill_and_restart():
        time.sleep(after)
        cluster.restart_server(kill=True)
        restarted.set()

    return threading.Thread(target=kill_and_restart), restarted


def server_log(cluster) -> str:
    with open(cluster.server_log) as f:
        return f.read()


def test_a_training_loop_goes_on_through_a_killed_and_restarted_server(cluster):
    """The loop reads its state back every step, as real loops read their
    loss; the server is SIGKILLed at a moment of its own and restarted at
    the same address. The loop does not notice (beyond a pause), keeps
    its arrays (none recomputed, none lost) and ends with JAX's numbers."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(2).compile(client, donate_argnums=(0,))
        compiled = client.stats()["executables_compiled"]
        killer, restarted = restart_soon(cluster)
        v = exe(v0, x)
        np.asarray(v)
        steps, after = 1, 0
        killer.start()
        # Until 20 steps after the restart (bounded: a step takes ms).
        while after < 20 and steps < 20000:
            v = exe(v, x)
            np.asarray(v)
            steps += 1
            after += restarted.is_set()
        killer.join(60)
        assert restarted.is_set() and after == 20
        np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, steps), rtol=1e-4, atol=1e-5)
        assert not client._lost
        # Its executable was lowered again from the caches, and a new
        # compile works as before.
        assert client.stats()["executables_compiled"] == compiled
        got = descent(1).compile(client)(v0, x)
        np.testing.assert_allclose(np.asarray(got), jax_steps(v0, x, 1), rtol=1e-6)
    log = server_log(cluster)
    assert "restored from the journal" in log and "taken back by its client" in log, log[-3000:]


def test_a_loop_that_uploads_a_large_batch_each_step_goes_on_through_a_restart(cluster):
    """Each step's batch (8 MiB) goes straight to the workers (a direct
    put) before its call; a put cut by the restart is made again."""
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((64, 1024), dtype=np.float32)
    batches = [rng.standard_normal((2048, 1024), dtype=np.float32) for _ in range(4)]

    def step(w, b):
        return w * 0.9 + jnp.mean(b, axis=0) * 0.1

    with pw.program("batches") as p:
        w = p.input(jax.ShapeDtypeStruct(w0.shape, jnp.float32))
        b = p.input(jax.ShapeDtypeStruct(batches[0].shape, jnp.float32))
        with pw.mesh("m", devices=2):
            p.outputs(jax.jit(step)(w, b))
    expected, f = w0, jax.jit(step)
    with pw.connect(cluster.address, devices=2) as client:
        exe = p.compile(client, donate_argnums=(0,))
        killer, restarted = restart_soon(cluster)
        killer.start()
        v, steps, after = w0, 0, 0
        while after < 5 and steps < 5000:
            v = exe(v, batches[steps % 4])
            np.asarray(v)
            expected = f(expected, batches[steps % 4])
            steps += 1
            after += restarted.is_set()
        killer.join(60)
        assert restarted.is_set() and after == 5
        np.testing.assert_allclose(np.asarray(v), np.asarray(expected), rtol=1e-5, atol=1e-5)


def test_a_server_killed_during_a_pause_comes_back_with_the_session(cluster):
    """The server is SIGKILLed while the session pauses: after the
    restart the session is either paused (its arrays in its checkpoint) or
    not (they stayed on the workers); either way it resumes and goes on
    with JAX's numbers."""
    v0, x = inputs()
    with pw.connect(cluster.address, devices=4) as client:
        exe = descent(2).compile(client)
        v = v0
        for _ in range(3):
            v = exe(v, x)
        v.block_until_ready()
        outcome = []

        def pause():
            try:
                client.pause()
                outcome.append("paused")
            except pw.ServerError as e:
                outcome.append(str(e))

        t = threading.Thread(target=pause)
        t.start()
        time.sleep(0.05)
        cluster.restart_server(kill=True)
        t.join(90)
        assert outcome, "the pause never returned"
        # Taken back by now (a wait is sent again if it must be); a resume
        # sent while the server was away would be refused, to be sent again.
        client.sync()
        if client.devices == ():
            client.resume(timeout=30)
        for _ in range(3):
            v = exe(v, x)
        np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 6), rtol=1e-5, atol=1e-6)


def test_a_client_waiting_in_line_keeps_its_place_through_a_restart(cluster):
    """A client waits for devices another holds; the server is SIGKILLed
    and restarted. Both take their places back (the holder its session,
    the waiter its place in line, with the ticket it was given), and the
    waiter is granted when the holder closes."""
    v0, x = inputs()
    holder = pw.connect(cluster.address, devices=4)
    got = {}

    def wait():
        try:
            with pw.connect(cluster.address, devices=4, timeout=60) as c:
                got["session"] = c.session
                got["value"] = np.asarray(descent(2).compile(c)(v0, x))
        except Exception as e:  # noqa: BLE001 (reported below)
            got["error"] = e

    def waiting():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                line = overview(cluster.address)["waiting"]
            except Exception:  # noqa: BLE001 (the server is starting)
                line = []
            if line:
                return [w["session"] for w in line]
            time.sleep(0.05)
        raise AssertionError("nobody waits in line")

    t = threading.Thread(target=wait)
    t.start()
    try:
        before = waiting()
        cluster.restart_server(kill=True)
        holder.sync()
        assert waiting() == before
        deadline = time.monotonic() + 30
        while "took its place in line back" not in server_log(cluster):
            assert time.monotonic() < deadline, server_log(cluster)[-3000:]
            time.sleep(0.05)
    finally:
        holder.close()
        t.join(90)
    assert "error" not in got, got.get("error")
    assert got["session"] == before[0]
    np.testing.assert_allclose(got["value"], jax_steps(v0, x, 1), rtol=1e-6)


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_journal_that_cannot_be_read_is_refused_naming_it(tmp_path, damage):
    """pw-server never starts afresh over a journal it cannot read."""
    state = tmp_path / "state"
    s = LocalServer(2, server_args=["--state-dir", str(state)])
    try:
        with pw.connect(s.address, devices=2) as client:
            descent(1).compile(client)
    finally:
        s.stop()
    journal = state / "journal.redb"
    data = journal.read_bytes()
    assert len(data) > 4096
    journal.write_bytes(data[: len(data) // 3] if damage == "truncated" else os.urandom(len(data)))
    done = subprocess.run(
        [find_tool("pw-server"), "--listen", "127.0.0.1:0", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0, done.stdout
    assert str(journal) in done.stderr and "move it aside" in done.stderr, done.stderr
    assert "listening on" not in done.stdout


def five_donated_steps(client):
    """Five donated steps of the loop on 4 devices, the state read back:
    the executable, the inputs and the state."""
    v0, x = inputs()
    exe = descent(2).compile(client, donate_argnums=(0,))
    v = v0
    for _ in range(5):
        v = exe(v, x)
    np.asarray(v)
    return exe, v0, x, v


def five_more_steps(exe, v0, x, v):
    """Five more steps from `v`, ending with JAX's numbers after 10."""
    for _ in range(5):
        v = exe(v, x)
    np.testing.assert_allclose(np.asarray(v), jax_steps(v0, x, 10), rtol=1e-5, atol=1e-6)


def test_calls_that_ran_are_not_run_again_when_what_they_made_was_kept(tmp_path, capfd, monkeypatch):
    """The journal writes 3 s behind the calls (PW_SERVER_FAULTS), so at
    the server's SIGKILL it holds none of the loop's 5 donated steps, and
    the client kept them all. The workers kept the state whole, so after
    the restart the client sends none of them again (running them again
    would recompute every step since the upload), frees what they took,
    and the loop goes on with JAX's numbers."""
    monkeypatch.setenv("PW_SERVER_FAULTS", "journal-lag=3000")
    s = LocalServer(2, server_args=["--state-dir", str(tmp_path / "state")])
    try:
        s.add_worker()
        with pw.connect(s.address, devices=4) as client:
            exe, v0, x, v = five_donated_steps(client)
            generation = client._generation
            s.restart_server(kill=True)
            # No call in flight while the client takes its session back.
            deadline = time.monotonic() + 60
            while client._generation == generation and time.monotonic() < deadline:
                time.sleep(0.01)
            five_more_steps(exe, v0, x, v)
            assert not client._lost
            stats = client.stats()
            assert stats["arrays_live"] == 1, stats
        assert "taken back (0 calls sent again, 0 arrays lost)" in capfd.readouterr().err
    finally:
        s.stop()


@pytest.mark.parametrize("lag", [0, 3000], ids=["logged", "not_yet_logged"])
def test_a_session_goes_on_when_one_of_its_workers_dies_while_the_server_is_away(tmp_path, capfd, monkeypatch, lag):
    """The server and one of the session's two workers are SIGKILLed
    together (as when a host is lost), and the server is restarted. It
    waits --reattach-workers-s for that worker, then goes on without it:
    the slice is topped up from a spare worker and the executable lowered
    again there. The loop ends with JAX's numbers either way:

    * logged: the journal holds the calls' lineage (the uploads, and the
      donated steps in between), and the arrays that had shards on the
      dead worker are computed again from it;
    * not_yet_logged: the journal writes 3 s behind the calls
      (PW_SERVER_FAULTS=journal-lag), so at the kill it holds none of
      them: the client had kept every call the journal did not yet hold
      (`SessionReply.calls_logged`), though the server had answered after
      them, and sends them again; they run again on the new slice."""
    if lag:
        monkeypatch.setenv("PW_SERVER_FAULTS", f"journal-lag={lag}")
    state = tmp_path / "state"
    s = LocalServer(2, server_args=["--state-dir", str(state), "--reattach-workers-s", "2"])
    try:
        s.add_worker()
        s.add_worker()
        with pw.connect(s.address, devices=4) as client:
            exe, v0, x, v = five_donated_steps(client)
            if not lag:
                # The journal writes a call's lineage within milliseconds.
                time.sleep(0.5)
            # The server first, so that it never hears of the worker's end.
            s.server.kill()
            s.server.wait(10)
            s.workers[1].kill()
            s.workers[1].wait(10)
            s.restart_server(kill=True)
            five_more_steps(exe, v0, x, v)
            assert not client._lost
            stats = client.stats()
            if lag:
                assert stats["arrays_recomputed"] == 0, stats
            else:
                assert stats["arrays_recomputed"] >= 1 and stats["calls_replayed"] >= 5, stats
        log = server_log(s)
        assert "did not register again" in log, log[-3000:]
        taken_back = re.search(r"taken back \((\d+) calls sent again, 0 arrays lost\)", capfd.readouterr().err)
        assert taken_back, "the client did not say it took its session back"
        if lag:
            assert int(taken_back[1]) >= 5, taken_back[0]
        else:
            assert "1 to compute again from their journaled lineage" in log, log[-3000:]
    finally:
        s.stop()
