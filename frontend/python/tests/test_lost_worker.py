"""A session that loses one of its workers: an array whose shards were on
it raises a data-loss error naming it, on use; the session goes on with its
other devices and arrays. (Runs, which have a plan for lineage, recover:
see tests/tests/cluster/recovery.rs.)"""

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


def two_stages():
    with pw.program("two_stages") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("a", devices=2):
            y = jax.jit(lambda v: v * 2.0)(x)
        with pw.mesh("b", devices=2):
            z = jax.jit(lambda v: v + 1.0)(y)
        p.outputs(z)
    return p


def test_an_array_lost_with_its_worker_is_a_data_loss_error_and_the_session_goes_on():
    server = LocalServer(2)
    log = open(os.path.join(server.logs, "second-worker.log"), "w")
    second = subprocess.Popen(
        [find_tool("pw-worker"), "--controller", server.address, "--devices", "2", "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=_env(),
    )
    try:
        _wait_workers(server.address, 2)
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        with pw.connect(server.address, devices=4) as client:
            exe = two_stages().compile(client)
            z = exe(x)
            np.testing.assert_allclose(np.asarray(z), x * 2 + 1)
            z = exe(x)
            z.block_until_ready()
            # Stage b ran on the second worker: it dies with z's shards.
            second.kill()
            second.wait(10)
            _wait_workers(server.address, 1)
            lost = rf"data loss: array {z._id} of session \d+ had shards on a worker that is gone \(worker 1 \("
            with pytest.raises(pw.ArrayError, match=lost):
                np.asarray(z)
            # The session goes on on the devices it has left.
            with pw.program("double") as p:
                v = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
                with pw.mesh("m", devices=2):
                    p.outputs(jax.jit(lambda a: a * 2.0)(v))
            np.testing.assert_allclose(np.asarray(p.compile(client)(x)), x * 2)
    finally:
        if second.poll() is None:
            second.kill()
            second.wait(10)
        log.close()
        server.stop()
