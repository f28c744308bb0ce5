"""A session that loses one of its workers. Its slice is topped up from a
worker that joins; an array whose shards were on the lost worker is computed
again from its lineage on use (uploads kept by the server, donated arrays in
between included), with the same values as JAX. Without lineage (the server
keeps no uploads) it raises a data-loss error naming it. Either way the
session goes on. (Runs recover too: see tests/tests/cluster/recovery.rs.)"""

import os
import subprocess
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pw
from pw._local import LocalServer, _env
from pw.tools import find_tool


def _workers(address):
    import grpc

    from pw._proto import pb

    with grpc.insecure_channel(address) as channel:
        status = channel.unary_unary(
            "/pw.v1.Controller/Status",
            request_serializer=pb.StatusRequest.SerializeToString,
            response_deserializer=pb.StatusReply.FromString,
        )
        return len(status(pb.StatusRequest(), timeout=5).workers)


def _wait_workers(address, n):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if _workers(address) == n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{n} workers never registered")


class _Workers:
    """Extra pw-workers of a LocalServer, each ended by PID."""

    def __init__(self, server):
        self.server = server
        self.procs = []
        self.logs = []

    def start(self, faults=None):
        env = _env()
        if faults:
            env["PW_WORKER_FAULTS"] = faults
        log = open(os.path.join(self.server.logs, f"worker-{len(self.procs) + 2}.log"), "w")
        self.logs.append(log)
        self.procs.append(
            subprocess.Popen(
                [find_tool("pw-worker"), "--controller", self.server.address, "--devices", "2", "--listen", "127.0.0.1:0"],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
            )
        )
        return self.procs[-1]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        for log in self.logs:
            log.close()


def two_stages():
    with pw.program("two_stages") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("a", devices=2):
            y = jax.jit(lambda v: v * 2.0)(x)
        with pw.mesh("b", devices=2):
            z = jax.jit(lambda v: v + 1.0)(y)
        p.outputs(z)
    return p


def step(v, x):
    return jnp.tanh(v @ x.T) @ x * 0.5 + v


def descent():
    with pw.program("descent") as p:
        v = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("a", devices=2):
            x = jax.jit(lambda a: a * 1.0)(x)
        with pw.mesh("b", devices=2):
            p.outputs(jax.jit(step)(v, x))
    return p


def double(client, x):
    with pw.program("double") as p:
        v = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("m", devices=2):
            p.outputs(jax.jit(lambda a: a * 2.0)(v))
    np.testing.assert_allclose(np.asarray(p.compile(client)(x)), x * 2)


def test_a_lost_array_is_computed_again_from_its_lineage_once_a_worker_joins():
    server = LocalServer(2, server_args=["--capacity-wait-ms", "1000"])
    extra = _Workers(server)
    try:
        second = extra.start()
        _wait_workers(server.address, 2)
        rng = np.random.default_rng(7)
        x = rng.standard_normal((8, 4), dtype=np.float32)
        with pw.connect(server.address, devices=4) as client:
            stages = two_stages().compile(client)
            # z is made from z1, made from an upload.
            z1 = stages(x)
            z = stages(z1)
            # v is three donated steps deep: the arrays in between are gone.
            walk = descent().compile(client, donate_argnums=(0,))
            v = walk(x, x)
            for _ in range(2):
                v = walk(v, x)
            want_v = x
            for _ in range(3):
                want_v = jax.jit(step)(want_v, x)
            z.block_until_ready()
            v.block_until_ready()
            # Stage b and the steps ran on the second worker: it dies with
            # their shards.
            second.kill()
            second.wait(10)
            _wait_workers(server.address, 1)
            # No device can take its place yet: a clear error in the bound.
            with pytest.raises(pw.ArrayError, match=rf"array {z._id} was lost with a worker and cannot be computed again: two_stages needs 4 devices; session \d+ has 2 left"):
                np.asarray(z)
            # A worker joins: the slice is topped up and z computed again.
            extra.start()
            _wait_workers(server.address, 2)
            np.testing.assert_allclose(np.asarray(z), (x * 2 + 1) * 2 + 1, rtol=1e-6)
            np.testing.assert_allclose(np.asarray(v), np.asarray(want_v), rtol=1e-5, atol=1e-6)
            # z took two calls (z1 first), v three (the donated steps).
            stats = client.stats()
            assert (stats["arrays_recomputed"], stats["calls_replayed"]) == (2, 5), stats
            # The session goes on, with its arrays and executables.
            np.testing.assert_allclose(np.asarray(stages(z)), ((x * 2 + 1) * 2 + 1) * 2 + 1, rtol=1e-6)
            double(client, x)
    finally:
        extra.stop()
        server.stop()


def test_the_outputs_of_a_call_that_lost_a_worker_are_computed_again():
    server = LocalServer(2)
    extra = _Workers(server)
    try:
        # Stage b waits on the second worker: the call is under way when it dies.
        second = extra.start(faults="delay-step=first:3000")
        _wait_workers(server.address, 2)
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        with pw.program("there_and_back") as p:
            v = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
            with pw.mesh("a", devices=2):
                v = jax.jit(lambda a: a * 2.0)(v)
            with pw.mesh("b", devices=2):
                v = jax.jit(lambda a: a + 1.0)(v)
            with pw.mesh("a", devices=2):
                p.outputs(jax.jit(lambda a: a * 3.0)(v))
        with pw.connect(server.address, devices=4) as client:
            z = p.compile(client)(x)
            time.sleep(0.5)
            second.kill()
            second.wait(10)
            extra.start()
            # z is on the first worker; the call making it failed.
            np.testing.assert_allclose(np.asarray(z), (x * 2 + 1) * 3)
            assert client.stats()["arrays_recomputed"] == 1
    finally:
        extra.stop()
        server.stop()


def test_an_array_lost_without_lineage_is_a_data_loss_error_and_the_session_goes_on():
    server = LocalServer(2, server_args=["--lineage-budget-mb", "0"])
    extra = _Workers(server)
    try:
        second = extra.start()
        _wait_workers(server.address, 2)
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        with pw.connect(server.address, devices=4) as client:
            exe = two_stages().compile(client)
            z = exe(x)
            np.testing.assert_allclose(np.asarray(z), x * 2 + 1)
            z = exe(x)
            z.block_until_ready()
            second.kill()
            second.wait(10)
            _wait_workers(server.address, 1)
            lost = (
                rf"array {z._id} is lost \(data loss: array {z._id} of session \d+ had shards on a "
                r"worker that is gone \(worker 1 \(.*\); it has no lineage"
            )
            with pytest.raises(pw.ArrayError, match=lost):
                np.asarray(z)
            # The session goes on on the devices it has left.
            double(client, x)
    finally:
        extra.stop()
        server.stop()
