"""Sessions on a shared pw-server: arrays that stay on the devices between
calls, executables compiled once, clients waiting in line for devices, and
the clear errors of misuse. Each test module starts its own pw-server and
pw-worker (real processes on 127.0.0.1), ended by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import grpc
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pw
import pw.client
import pw.tools
from pw._local import LocalServer
from pw._proto import pb

from test_run import SEED, assert_matches_jax

STEPS = 20
DEVICES = 4


@pytest.fixture(scope="module")
def server():
    s = LocalServer(DEVICES, server_args=["--client-lease-ms", "3000"])
    yield s
    s.stop()


def ask(address, method, request, reply_type):
    """One unary request to the controller at `address`."""
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(
            f"/pw.v1.Controller/{method}",
            request_serializer=type(request).SerializeToString,
            response_deserializer=reply_type.FromString,
        )
        return call(request, timeout=5)


def workers_status(address):
    return ask(address, "Status", pb.StatusRequest(), pb.StatusReply)


def held(address):
    """(worker, live buffers, active runs) of every worker, as its last
    heartbeat said."""
    return [(w.worker, w.counters.live_buffers, w.counters.runs_active) for w in workers_status(address).workers]


def overview(address):
    """The status page's JSON (`/api/status`), through the server's RPC."""
    import json

    return json.loads(ask(address, "Overview", pb.OverviewRequest(), pb.OverviewReply).json)


def assert_workers_hold_nothing(address, within=10.0):
    deadline = time.monotonic() + within
    while True:
        now = held(address)
        if all(b == 0 and r == 0 for _, b, r in now):
            return
        assert time.monotonic() < deadline, f"workers still hold (worker, buffers, runs): {now}"
        time.sleep(0.05)


def doubler(devices=2):
    with pw.program("doubler") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("m", devices=devices):
            y = jax.jit(lambda v: v * 2, in_shardings=P("x"), out_shardings=P("x"))(x)
        p.outputs(y)
    return p


@pytest.fixture(scope="module")
def train(examples):
    block, make_inputs = examples.EXAMPLES["pipeline_train"]
    microbatches, targets, params = make_inputs(np.random.default_rng(SEED))
    program = examples.capture("pipeline_train", block, [microbatches, targets, params])
    return examples, block, program, microbatches, targets, params


def test_a_training_loop_keeps_its_weights_on_the_devices(server, train):
    """20 steps with the weights fed back: JAX's results; steps 2..20 lower
    and compile nothing, and send only the batch (the weights never leave
    the devices until fetched)."""
    examples, block, program, microbatches, targets, params = train
    n_params = len(jax.tree.leaves(params))
    first_param = len(microbatches) + len(targets)
    with pw.connect(server.address) as client:
        step = program.compile(client, donate_argnums=tuple(range(first_param, first_param + n_params)))
        state = jax.tree.leaves(params)
        batch_bytes = sum(a.nbytes for a in microbatches + targets)
        losses = []
        after = []
        for i in range(STEPS):
            out = step(microbatches, targets, state)
            state, loss = out[:n_params], out[n_params:]
            losses.append(loss)
            after.append(client.stats())
        final = [np.asarray(a) for a in state]
        last_losses = [np.asarray(a) for a in losses[-1]]
        first = after[0]
        for i, s in enumerate(after[1:], start=2):
            assert s["lowerings"] == first["lowerings"] == 1, f"step {i}: {s}"
            assert s["executables_compiled"] == first["executables_compiled"], f"step {i}: {s}"
            assert s["executables_from_cache"] == first["executables_from_cache"], f"step {i}: {s}"
        per_step = (after[-1]["bytes_from_client"] - first["bytes_from_client"]) / (STEPS - 1)
        assert per_step == batch_bytes, (per_step, batch_bytes)
        # Nothing went through the controller but the batches and the first
        # weights: no weight came back to be re-laid out through the host.
        param_bytes = sum(a.nbytes for a in jax.tree.leaves(params))
        assert after[-1]["bytes_to_workers"] == STEPS * batch_bytes + param_bytes, after[-1]
        assert after[-1]["bytes_from_workers"] == 0, after[-1]
        # Donated weights were freed; only the latest state and losses live.
        assert after[-1]["arrays_live"] <= n_params + STEPS * len(losses[-1]), after[-1]
    # Plain JAX, the same 20 steps.
    want = jax.tree.leaves(params)
    for _ in range(STEPS):
        outs = examples.reference(block, [microbatches, targets, [tuple(want[2 * s : 2 * s + 2]) for s in range(len(params))]])
        want, want_losses = outs[:n_params], outs[n_params:]
    assert_matches_jax(final, want, rtol=1e-4, atol=1e-5)
    assert_matches_jax(last_losses, want_losses, rtol=1e-4, atol=1e-5)
    assert_workers_hold_nothing(server.address)


def test_a_second_client_waits_in_line_until_the_first_closes(server):
    first = pw.connect(server.address)
    assert len(first.devices) == DEVICES
    with pytest.raises(pw.DevicesBusyError, match=r"waited .* for every device; they are held by session"):
        pw.connect(server.address, timeout=0.3)
    got = []
    waiter = threading.Thread(target=lambda: got.append(pw.connect(server.address, timeout=30)))
    waiter.start()
    deadline = time.monotonic() + 10
    while not overview(server.address)["waiting"]:
        assert time.monotonic() < deadline, "the second client never showed as waiting"
        time.sleep(0.05)
    assert waiter.is_alive() and not got, "the second client did not wait"
    # The status shows who holds the devices and who waits.
    status = overview(server.address)
    assert [(x["session"], sorted(x["devices"])) for x in status["sessions"]] == [(first.session, sorted(first.devices))]
    assert [(w["position"], w["devices"]) for w in status["waiting"]] == [(1, 0)]
    table = subprocess.run(
        [pw.tools.find_tool("pw-status"), "--server", server.address], capture_output=True, text=True, timeout=30
    )
    assert table.returncode == 0, table.stderr
    assert f"SESSION {first.session} " in table.stdout and "WAITING 1. session" in table.stdout, table.stdout
    first.close()
    waiter.join(10)
    assert got, "the second client was not granted the devices"
    second = got[0]
    assert sorted(second.devices) == sorted(first.devices)
    second.close()


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_a_vanished_client_releases_its_devices_and_arrays(server, how):
    """A killed client's connection breaks at once; a hung one (stopped)
    stops sending heartbeats and answering the transport's keepalive
    pings, and loses its session after the lease (3 s here) or the
    keepalive timeout, whichever comes first. Either way its devices go to the next client and the workers
    drop its arrays."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import time, numpy as np, jax, jax.numpy as jnp, pw
                from jax.sharding import PartitionSpec as P
                with pw.program("doubler") as p:
                    x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
                    with pw.mesh("m", devices=2):
                        y = jax.jit(lambda v: v * 2, in_shardings=P("x"), out_shardings=P("x"))(x)
                    p.outputs(y)
                client = pw.connect({server.address!r})
                y = p.compile(client)(np.ones((8, 4), np.float32)).block_until_ready()
                print("holding", flush=True)
                time.sleep(120)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()
        assert line.strip() == "holding", child.stderr.read()
        deadline = time.monotonic() + 5
        while not any(b > 0 for _, b, _ in held(server.address)):
            assert time.monotonic() < deadline, "the child's array never showed on the workers"
            time.sleep(0.05)
        gone = time.monotonic()
        if how == "SIGKILL":
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        else:
            child.send_signal(signal.SIGSTOP)
        client = pw.connect(server.address, timeout=15)
        waited = time.monotonic() - gone
        assert len(client.devices) == DEVICES
        client.close()
        print(f"{how}: the devices were free again {waited:.1f} s later")
        assert_workers_hold_nothing(server.address)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


def test_misuse_gets_clear_errors(server):
    p = doubler()
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    a = pw.connect(server.address, devices=2)
    b = pw.connect(server.address, devices=2)
    try:
        exe_a, exe_b = p.compile(a), p.compile(b)
        y = exe_a(x)
        np.testing.assert_array_equal(np.asarray(y), 2 * x)
        assert y.shape == (8, 4) and y.dtype == np.float32 and len(y.sharding.devices) == 2
        # Another session's array.
        with pytest.raises(pw.ArrayError, match=r"is array \d+ of session \d+, not of this session"):
            exe_b(y)
        # Wrong shape or dtype.
        with pytest.raises(pw.ProgramError, match=r"input #0 is float32\[4, 4\], the program expects float32\[8, 4\]"):
            exe_a(np.ones((4, 4), np.float32))
        with pytest.raises(pw.ProgramError, match=r"input #0 is int32"):
            exe_a(np.ones((8, 4), np.int32))
        # A deleted array.
        y.delete()
        assert y.is_deleted()
        with pytest.raises(pw.ArrayDeletedError, match="Array has been deleted"):
            exe_a(y)
        with pytest.raises(pw.ArrayDeletedError, match="Array has been deleted"):
            np.asarray(y)
        # A stale handle: the server freed the array behind the client's
        # back. The call still returns at once (it is not answered); its
        # outputs carry the refusal, raised where they are used, and the
        # session goes on.
        z = exe_a(x)
        a._send(pb.SessionRequest(delete=pb.SessionDelete(arrays=[z._id])))
        w = exe_a(z)
        with pytest.raises(pw.ArrayError, match=rf"array {z._id} does not exist in session {a.session}"):
            np.asarray(w)
        with pytest.raises(pw.ArrayError, match=rf"array {w._id}: the call that makes it was refused"):
            w.block_until_ready()
        with pytest.raises(pw.ArrayError, match=rf"array {z._id} does not exist in session {a.session}"):
            np.asarray(z)
        np.testing.assert_array_equal(np.asarray(exe_a(x)), 2 * x)
        # A program that does not fit the slice: the lowering's diagnostic.
        with pytest.raises(pw.ToolError, match="needs 4 devices"):
            doubler(devices=4).compile(a)
    finally:
        a.close()
        b.close()
    # A closed client.
    with pytest.raises(pw.SessionError, match="the client is closed"):
        exe_a(x)
    assert_workers_hold_nothing(server.address)


def test_outputs_of_a_running_call_feed_the_next_without_waiting(server):
    """Ten calls chained before anything is fetched: each takes the previous
    one's output while it may still be computing."""
    p = doubler()
    x = np.ones((8, 4), np.float32)
    with pw.connect(server.address, devices=2) as client:
        exe = p.compile(client)
        y = exe(x)
        for _ in range(9):
            y = exe(y)
        np.testing.assert_array_equal(np.asarray(y), x * 2**10)
        assert client.stats()["bytes_from_client"] == x.nbytes


def test_arrays_laid_out_otherwise_move_device_to_device(server):
    """An output split by rows on two devices, fed to a program that takes
    it split by columns on four: the server lays it out anew device to
    device (no byte of it comes back to the server), and the result is
    numpy's."""
    rows = doubler(devices=2)
    with pw.program("columns") as q:
        x = q.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("m", devices=4):
            y = jax.jit(lambda v: v + 1, in_shardings=P(None, "x"), out_shardings=P(None, "x"))(x)
        q.outputs(y)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    with pw.connect(server.address, devices=4) as client:
        by_rows, by_columns = rows.compile(client), q.compile(client)
        z = by_columns(by_rows(x))
        np.testing.assert_array_equal(np.asarray(z), x * 2 + 1)
        # What came from the workers is the fetch of z, assembled from
        # its four shards: nothing for the relayout.
        assert client.stats()["bytes_from_workers"] == x.nbytes, client.stats()


def test_arrays_dropped_while_their_calls_wait_are_still_read(server):
    """Each step's input is dropped as soon as the call returns (freed with
    the next call), while the call that reads it may still wait for its
    turn on the worker: deletions keep the workers' gang order, so every
    call still finds its input."""
    with pw.program("heavy") as p:
        x = p.input(jax.ShapeDtypeStruct((256, 256), jnp.float32))
        with pw.mesh("m", devices=1):
            y = jax.jit(lambda v: jax.lax.fori_loop(0, 8, lambda _, h: jnp.tanh(h @ h) * 0.5, v))(x)
        p.outputs(y)
    x = np.random.default_rng(0).standard_normal((256, 256), dtype=np.float32) / 16
    want = x
    step = jax.jit(lambda v: jax.lax.fori_loop(0, 8, lambda _, h: jnp.tanh(h @ h) * 0.5, v))
    with pw.connect(server.address, devices=1) as client:
        exe = p.compile(client)
        y = x
        for _ in range(30):
            y = exe(y)  # the previous y is dropped here
        got = np.asarray(y)
        assert client.stats()["arrays_live"] <= 2, client.stats()
    for _ in range(30):
        want = step(want)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-5)


def test_a_server_that_went_away_is_a_clear_error():
    s = LocalServer(2)
    try:
        client = pw.connect(s.address)
        exe = doubler().compile(client)
        s.stop()
        # The call may be queued before the client hears the stream break:
        # then its fetch raises.
        with pytest.raises(pw.ServerError, match=f"the pw-server at {s.address} cannot be reached"):
            np.asarray(exe(np.ones((8, 4), np.float32)))
        client.close()
    finally:
        s.stop()


def test_p_run_uses_the_open_client_and_compiles_once(server):
    p = doubler()
    x = np.ones((8, 4), np.float32)
    with pw.connect(server.address) as client:
        assert pw.default_client() is client
        np.testing.assert_array_equal(p.run(x), 2 * x)
        before = client.stats()
        for _ in range(3):
            np.testing.assert_array_equal(p.run(x), 2 * x)
        after = client.stats()
        assert after["lowerings"] == before["lowerings"] == 1
        assert after["executables_compiled"] == before["executables_compiled"]
        assert after["calls"] == before["calls"] + 3


def test_p_run_without_a_client_holds_no_devices_afterwards():
    """With no client open, p.run opens a session for the run and closes
    it: the local server's devices are all free again."""
    p = doubler()
    x = np.ones((8, 4), np.float32)
    assert pw.client.open_client() is None
    np.testing.assert_array_equal(p.run(x), 2 * x)
    np.testing.assert_array_equal(p.run(x, devices=2), 2 * x)
    address = os.environ.get("PW_SERVER") or pw._local.address(None)
    assert overview(address)["sessions"] == []
