"""The asynchronous client boundary of sessions: ``exe(...)`` returns before
its call has run, and what that must not break — the order of calls, errors
that reach the handles they concern (and only those), a bound on what a
flooding client may have in flight, and a client killed with calls in flight
leaving nothing on the workers. A pw-server (with ``--max-calls-in-flight
2``) and its pw-worker are real processes on 127.0.0.1, ended by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pw
from pw._local import LocalServer
from pw._proto import pb

from test_session import assert_workers_hold_nothing, overview

DEVICES = 2
IN_FLIGHT = 2
N = 192


def heavy_step(v):
    return jax.lax.fori_loop(0, 12, lambda _, h: jnp.tanh(h @ h) * 0.5, v)


HEAVY_SOURCE = """
def heavy_step(v):
    return jax.lax.fori_loop(0, 12, lambda _, h: jnp.tanh(h @ h) * 0.5, v)
"""


@pytest.fixture(scope="module")
def server():
    s = LocalServer(DEVICES, server_args=["--max-calls-in-flight", str(IN_FLIGHT)])
    yield s
    s.stop()


def program(name, fn, *shapes, devices=1, shardings=None):
    with pw.program(name) as p:
        xs = [p.input(jax.ShapeDtypeStruct(s, jnp.float32)) for s in shapes]
        with pw.mesh("m", devices=devices):
            if shardings is None:
                y = jax.jit(fn)(*xs)
            else:
                y = jax.jit(fn, in_shardings=shardings, out_shardings=shardings[0])(*xs)
        p.outputs(y)
    return p


def test_interleaved_calls_deletes_and_fetches_keep_their_order(server):
    """Two chains woven together — each call takes the other chain's
    latest output, inputs are dropped as soon as they are passed on, and
    results are fetched in another order than they were made — give
    numpy's values: the server takes a session's requests in the order
    they were sent, whatever is still running."""
    shape = (8, 4)
    sharded = (P("x"), P("x"))
    mix = program("mix", lambda a, b: a * 0.5 + b, shape, shape, devices=DEVICES, shardings=sharded).compile
    rng = np.random.default_rng(7)
    a0, b0 = (rng.standard_normal(shape, dtype=np.float32) for _ in range(2))
    with pw.connect(server.address, devices=DEVICES) as client:
        f = mix(client)
        a, b = a0, b0
        kept = []
        for i in range(40):
            a, b = f(a, b), f(b, a)
            if i % 10 == 9:
                kept.append((a, b))
        want_a, want_b = a0, b0
        wants = []
        for i in range(40):
            want_a, want_b = want_a * 0.5 + want_b, want_b * 0.5 + want_a
            if i % 10 == 9:
                wants.append((want_a, want_b))
        # Newest first: each fetch waits only for the calls it needs.
        for (a, b), (wa, wb) in reversed(list(zip(kept, wants))):
            np.testing.assert_allclose(np.asarray(b), wb, rtol=1e-5)
            np.testing.assert_allclose(np.asarray(a), wa, rtol=1e-5)
        # The dropped arrays are gone (the last few go with the next
        # request: deletes travel behind calls).
        assert client.stats()["arrays_live"] <= 2 * len(kept) + 2, client.stats()
    assert_workers_hold_nothing(server.address)


def test_an_error_reaches_the_handles_it_concerns_and_no_other(server):
    """A call refused after it returned (an input the server no longer
    has) fails its outputs and, through them, every later call that reads
    them, each naming the array and the call; an independent chain sent
    in between and after is untouched."""
    shape = (8, 4)
    p = program("plus_one", lambda v: v + 1, shape)
    x = np.zeros(shape, np.float32)
    with pw.connect(server.address, devices=1) as client:
        exe = p.compile(client)
        gone = exe(x)
        client._send(pb.SessionRequest(delete=pb.SessionDelete(arrays=[gone._id])))
        bad = exe(gone)  # returns at once; refused on the server
        good = exe(x)
        worse = exe(exe(bad))  # reads a failed array: fails too
        for _ in range(5):
            good = exe(good)
        with pytest.raises(pw.ArrayError, match=rf"array {gone._id} does not exist in session {client.session}"):
            bad.block_until_ready()
        with pytest.raises(pw.ArrayError, match=r"array \d+"):
            np.asarray(worse)
        np.testing.assert_array_equal(np.asarray(good), x + 6)
        np.testing.assert_array_equal(np.asarray(exe(x)), x + 1)
    assert_workers_hold_nothing(server.address)


def test_a_flooding_client_is_held_back(server):
    """Sixty independent heavy calls sent as fast as the client can: the
    server never runs more than ``--max-calls-in-flight`` of the session's
    calls at once (it stops reading the session until some finish, and the
    client's queue then blocks the caller), and every call still gives
    JAX's value."""
    shape = (N, N)
    p = program("heavy", heavy_step, shape)
    x = np.random.default_rng(3).standard_normal(shape, dtype=np.float32) / 16
    want = np.asarray(jax.jit(heavy_step)(x))
    seen = []
    stop = threading.Event()

    def watch(session):
        while not stop.is_set():
            for s in overview(server.address)["sessions"]:
                if s["session"] == session:
                    seen.append(int(s["calls_running"]))
            time.sleep(0.002)

    with pw.connect(server.address, devices=1) as client:
        exe = p.compile(client)
        x_on_device = exe(x)  # one upload, then calls that only read it
        x_on_device.block_until_ready()
        watcher = threading.Thread(target=watch, args=(client.session,), daemon=True)
        watcher.start()
        try:
            outs = [exe(x_on_device) for _ in range(60)]
            got = [np.asarray(y) for y in outs]
        finally:
            stop.set()
            watcher.join(10)
        np.testing.assert_allclose(np.asarray(x_on_device), want, rtol=1e-4, atol=1e-5)
    want = np.asarray(jax.jit(heavy_step)(want))
    for y in got:
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    assert seen and max(seen) >= 1, f"the watcher never saw a call running: {seen[:20]}"
    assert max(seen) <= IN_FLIGHT, f"calls running at once: up to {max(seen)} (limit {IN_FLIGHT})"
    assert_workers_hold_nothing(server.address)


def test_a_client_killed_with_calls_in_flight_leaves_nothing(server):
    """A client that sent a chain of heavy calls and a fetch, then was
    SIGKILLed while they ran: its session ends, the calls already on the
    workers finish or are dropped, and the workers end up holding none
    of its buffers; the next client gets every device."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import time, threading, numpy as np, jax, jax.numpy as jnp, pw
                {textwrap.indent(HEAVY_SOURCE, "                ").strip()}
                with pw.program("heavy") as p:
                    x = p.input(jax.ShapeDtypeStruct(({N}, {N}), jnp.float32))
                    with pw.mesh("m", devices=1):
                        y = jax.jit(heavy_step)(x)
                    p.outputs(y)
                client = pw.connect({server.address!r}, devices={DEVICES})
                exe = p.compile(client)
                y = np.ones(({N}, {N}), np.float32) / 16
                for _ in range(200):
                    y = exe(y)
                threading.Thread(target=lambda: np.asarray(y), daemon=True).start()
                print("sent", flush=True)
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
        assert line.strip() == "sent", child.stderr.read()
        deadline = time.monotonic() + 10
        while not any(int(s["calls_running"]) > 0 for s in overview(server.address)["sessions"]):
            assert time.monotonic() < deadline, "the child's calls never showed as running"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        with pw.connect(server.address, timeout=20) as client:
            assert len(client.devices) == DEVICES
        assert_workers_hold_nothing(server.address, within=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


def test_a_traced_session_shows_where_each_call_went(tmp_path):
    """With ``pw-server --trace-sessions``, a session's Chrome trace shows
    each call from the client's ``exe()`` through the wire, the server's
    reading, dispatch and the run on the workers to its outputs ready, and
    each fetch, in that order on one clock."""
    traces = tmp_path / "traces"
    s = LocalServer(DEVICES, server_args=["--trace-sessions", str(traces)])
    try:
        p = program("plus_one", lambda v: v + 1, (8, 4))
        x = np.zeros((8, 4), np.float32)
        with pw.connect(s.address, devices=1) as client:
            exe = p.compile(client)
            y = x
            for _ in range(5):
                y = exe(y)
            np.testing.assert_array_equal(np.asarray(y), x + 5)
            session = client.session
        path = traces / f"session-{session}.json"
        deadline = time.monotonic() + 10
        while not path.exists():
            assert time.monotonic() < deadline, f"no trace at {path}: {list(traces.glob('*'))}"
            time.sleep(0.05)
        import json

        events = json.loads(path.read_text())["traceEvents"]
    finally:
        s.stop()
    tracks = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]

    def on(track_name, text):
        return [e for e in spans if tracks[e["tid"]].startswith(track_name) and text in e["name"]]

    for n in range(1, 6):
        call = f"call {n} of plus_one: "
        (asked,) = on("client", call + "exe() queues it")
        (wire,) = on("client", call + "in the client's queue and on the wire")
        (read,) = on("controller", call + "read and checked")
        (dispatched,) = on("controller", call + "dispatched")
        assert asked["ts"] <= wire["ts"] <= read["ts"] <= dispatched["ts"], (asked, wire, read, dispatched)
    # Each run on the workers, and the device spans inside the trace.
    assert len(on("controller", "plus_one: on the workers until its outputs are ready")) == 5
    assert [e for e in spans if tracks[e["tid"]].startswith("device")], tracks
    (fetch,) = on("controller", "fetch of array")
    assert fetch["name"].endswith("(128 bytes)"), fetch


def worker_bytes_to_clients(address):
    """What the workers' last heartbeats say clients took from them."""
    from test_session import workers_status

    return sum(w.counters.bytes_to_clients for w in workers_status(address).workers)


def heard_bytes_to_clients(address, want, within=10.0):
    """The workers' bytes to clients once their heartbeats say at least
    `want`, or what they said last after `within` seconds."""
    deadline = time.monotonic() + within
    while (got := worker_bytes_to_clients(address)) < want and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


@pytest.mark.parametrize("spec", [P("x"), P(None, "x"), P()], ids=["rows", "columns", "replicated"])
def test_large_arrays_come_straight_from_their_workers(server, spec):
    """A fetch of an array whose shards are over 1 MiB (smaller ones are
    one message each way through the server): the server hands out one
    ticket per distinct shard and the client takes each from its worker's data port
    (nothing through the server); the array is numpy's, however it is
    split. With PW_DIRECT=0 the same fetch goes through the server."""
    shape = (1024, 1024)  # 4 MiB of float32, 2 MiB a shard when split
    p = program("double", lambda v: v * 2, shape, devices=DEVICES, shardings=(spec,))
    x = np.random.default_rng(5).standard_normal(shape, dtype=np.float32)
    with pw.connect(server.address, devices=DEVICES) as client:
        exe = p.compile(client)
        y = exe(x)
        before, taken = client.stats(), worker_bytes_to_clients(server.address)
        np.testing.assert_array_equal(np.asarray(y), 2 * x)
        after = client.stats()
        assert after["bytes_from_workers"] == before["bytes_from_workers"], after
        # Each distinct shard once (a replicated array's one copy).
        assert heard_bytes_to_clients(server.address, taken + x.nbytes) >= taken + x.nbytes
        z = exe(x)
        os.environ["PW_DIRECT"] = "0"
        try:
            np.testing.assert_array_equal(np.asarray(z), 2 * x)
        finally:
            del os.environ["PW_DIRECT"]
        assert client.stats()["bytes_from_workers"] - after["bytes_from_workers"] == x.nbytes
    assert_workers_hold_nothing(server.address)


def test_a_ticket_is_good_once_and_only_from_the_server(server):
    """A direct fetch's ticket takes its shard once; used again, or made
    up, the worker refuses it (and says nothing of the shard). A fetch
    whose worker cannot be reached falls back to the server."""
    from pw import _session

    shape = (1024, 1024)
    p = program("double", lambda v: v * 2, shape)
    x = np.ones(shape, np.float32)
    with pw.connect(server.address, devices=1) as client:
        y = p.compile(client)(x)
        direct = client._fetch_once(y._id, x.nbytes, False, direct=True)
        assert isinstance(direct, pb.DirectShards) and len(direct.shards) == 1, direct
        np.testing.assert_array_equal(_session.take_direct(direct, y.shape, y.dtype), 2 * x)
        with pytest.raises(pw.ServerError, match="no such ticket"):
            _session.take_direct(direct, y.shape, y.dtype)
        forged = pb.DirectShards()
        forged.CopyFrom(direct)
        forged.shards[0].ticket = os.urandom(16)
        with pytest.raises(pw.ServerError, match="no such ticket"):
            _session.take_direct(forged, y.shape, y.dtype)
        # A worker out of reach (a closed port): through the server.
        real = _session.take_direct

        def unreachable(direct, shape, dtype):
            d = pb.DirectShards()
            d.CopyFrom(direct)
            d.shards[0].address = "127.0.0.1:1"
            return real(d, shape, dtype)

        _session.take_direct = unreachable
        try:
            np.testing.assert_array_equal(np.asarray(y), 2 * x)
        finally:
            _session.take_direct = real
    assert_workers_hold_nothing(server.address)


def worker_bytes_from_clients(address):
    from test_session import workers_status

    return sum(w.counters.bytes_from_clients for w in workers_status(address).workers)


@pytest.mark.parametrize("spec", [P("x"), P(None, "x"), P()], ids=["rows", "columns", "replicated"])
def test_large_arguments_go_straight_to_their_workers(server, spec):
    """A host argument over 4 MiB: the server makes it an array laid out as
    the executable takes it and hands out a write ticket per shard; the
    client gives each shard to its worker (every copy of a replicated
    one), and the call reads it there: nothing through the server, JAX's
    result. With PW_DIRECT=0 the bytes go with the call, as before."""
    shape = (1024, 2048)  # 8 MiB of float32
    p = program("head", lambda v: v[:8] * 2, shape, devices=DEVICES, shardings=(spec,))
    x = np.random.default_rng(9).standard_normal(shape, dtype=np.float32)
    want = x[:8] * 2
    copies = DEVICES if spec == P() else 1
    with pw.connect(server.address, devices=DEVICES) as client:
        exe = p.compile(client)
        before, given = client.stats(), worker_bytes_from_clients(server.address)
        np.testing.assert_allclose(np.asarray(exe(x)), want, rtol=1e-5, atol=1e-4)
        after = client.stats()
        assert after["bytes_to_workers"] == before["bytes_to_workers"], after
        heard = given
        deadline = time.monotonic() + 10
        while heard < given + copies * x.nbytes and time.monotonic() < deadline:
            time.sleep(0.05)
            heard = worker_bytes_from_clients(server.address)
        assert heard >= given + copies * x.nbytes, (heard, given)
        os.environ["PW_DIRECT"] = "0"
        try:
            np.testing.assert_allclose(np.asarray(exe(x)), want, rtol=1e-5, atol=1e-4)
        finally:
            del os.environ["PW_DIRECT"]
        assert client.stats()["bytes_to_workers"] - after["bytes_to_workers"] == copies * x.nbytes
        # The arrays put for the calls are freed behind them.
        client.sync()
        assert client.stats()["arrays_live"] <= 3, client.stats()
    assert_workers_hold_nothing(server.address)


def test_a_write_ticket_takes_only_what_it_was_granted(server):
    """A direct put's ticket takes exactly its shard's bytes, once: a
    wrong length or a second use is refused with why, a made-up ticket
    too, and the session goes on."""
    from pw import _session

    shape = (1024, 2048)
    p = program("head", lambda v: v[:8] * 2, shape)
    x = np.ones(shape, np.float32)
    with pw.connect(server.address, devices=1) as client:
        exe = p.compile(client)

        def granted():
            array = client._mint()
            put = pb.SessionPut(executable=exe._id, input=0, array=array)

            def request(i):
                put.id = i
                return pb.SessionRequest(put=put)

            shards = client._ask(request).result()
            assert isinstance(shards, pb.DirectShards) and len(shards.shards) == 1
            return array, shards

        _, shards = granted()
        # A length that is not the shard's: refused before a byte is taken.
        import socket
        import struct

        (shard,) = shards.shards
        host, _, port = shard.address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(_session.BULK_MAGIC + shard.ticket + struct.pack("<Q", 12345))
            with pytest.raises(pw.ServerError, match="12345 bytes declared for a shard of 8388608"):
                _session._answer(sock, shard, "take")
        with pytest.raises(pw.ServerError, match="no such ticket"):
            _session.give_direct(shards, x)
        forged = pb.DirectShards()
        forged.CopyFrom(shards)
        forged.shards[0].ticket = os.urandom(16)
        with pytest.raises(pw.ServerError, match="no such ticket"):
            _session.give_direct(forged, x)
        array, shards = granted()
        _session.give_direct(shards, x)
        # The array it stored is what a call then reads.
        ref = pb.ArrayRef(session=client.session, array=array)
        out = client._mint()
        call = pb.SessionCall(executable=exe._id, arguments=[pb.CallArgument(array=ref)], outputs=[out])
        client._send(pb.SessionRequest(call=call))
        np.testing.assert_array_equal(client._fetch(out, (8, 2048), np.dtype(np.float32)), x[:8] * 2)
        np.testing.assert_array_equal(np.asarray(exe(x)), x[:8] * 2)
    assert_workers_hold_nothing(server.address)
