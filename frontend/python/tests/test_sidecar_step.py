"""Python steps of pw programs (``pw.sidecar``): a function recorded in a
captured program runs in the sidecar of the worker holding its mesh's
devices, on whole numpy arrays, and its outputs feed jitted calls on the
devices. Results are compared with the same Python and the same jitted
functions run in this process. The module starts its own pw-server and two
pw-workers of 2 devices (real processes on 127.0.0.1, the workers with
sidecars of this interpreter), ended by PID."""

from __future__ import annotations

import os
import re
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pw
from pw._local import LocalServer

from test_run import assert_matches_jax

B, D = 8, 16


@pytest.fixture(scope="module")
def server():
    s = LocalServer(2)
    try:
        s.add_worker()
        yield s
    finally:
        s.stop()


@pw.sidecar(out_specs=(jax.ShapeDtypeStruct((B, D), jnp.float32), jax.ShapeDtypeStruct((B,), jnp.float32)))
def load_batch(step):
    """A data loader next to the devices: numpy, seeded by the step."""
    rng = np.random.default_rng(int(step))
    raw = rng.integers(0, 256, size=(B, D)).astype(np.float32)
    x = (raw - raw.mean(axis=0)) / (raw.std(axis=0) + 1.0)
    return x.astype(np.float32), (x.sum(axis=1) > 0).astype(np.float32)


@jax.jit
def train_step(w, x, y):
    def loss(w):
        return jnp.mean((jnp.tanh(x @ w).sum(axis=1) - y) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return w - 0.1 * grad, value


def test_a_data_loading_loop_feeds_a_jitted_step_like_in_process(server):
    """The loader runs in the sidecar (its outputs are not the stand-in's
    zeros), the weights stay on the devices between steps, and five steps
    give what the same Python and JAX give here."""
    with pw.program("loader_loop") as p:
        step = p.input(jax.ShapeDtypeStruct((), jnp.int32))
        w = p.input(jax.ShapeDtypeStruct((D, D), jnp.float32))
        with pw.mesh("host", devices=2):
            x, y = load_batch(step)
            w2, loss = train_step(w, x, y)
        p.outputs((w2, loss, x))
    assert 'pw.sidecar = "' in p.text()
    w0 = np.random.default_rng(1).normal(size=(D, D)).astype(np.float32) * 0.1
    with pw.connect(server.address) as client:
        run = p.compile(client, donate_argnums=(1,))
        state, got = w0, []
        for i in range(5):
            state, loss, x = run(np.int32(i), state)
            got.append(np.asarray(loss))
        final, last_x = np.asarray(state), np.asarray(x)
    want_w, want = w0, []
    for i in range(5):
        bx, by = load_batch(np.int32(i))
        want_w, loss = train_step(want_w, bx, by)
        want.append(np.asarray(loss))
    assert np.abs(last_x).sum() > 0
    np.testing.assert_array_equal(last_x, load_batch(np.int32(4))[0])
    assert_matches_jax(got, want, rtol=1e-5, atol=1e-6)
    assert_matches_jax([final], [np.asarray(want_w)], rtol=1e-5, atol=1e-6)


def test_sharded_inputs_arrive_whole_and_pytrees_go_both_ways(server):
    """An input sharded over the mesh reaches the function whole; a dict
    in and a tuple out; out_specs computed from the inputs' specs; an
    output sharded over the mesh is cut back into its shards."""
    seen = {}

    def stats(batch):
        a, b = batch["a"], batch["b"]
        assert isinstance(a, np.ndarray) and a.shape == (B, D), (type(a), a.shape)
        return (a * b[:, None]).astype(np.float32), np.array([a.min(), a.max()], dtype=np.float32)

    step = pw.sidecar(
        stats,
        out_specs=lambda batch: (batch["a"], jax.ShapeDtypeStruct((2,), jnp.float32)),
        in_shardings=({"a": P("x"), "b": P()},),
        out_shardings=(P("x"), P()),
    )

    @jax.jit
    def double(v):
        return v * 2

    with pw.program("whole") as p:
        a = p.input(jax.ShapeDtypeStruct((B, D), jnp.float32))
        b = p.input(jax.ShapeDtypeStruct((B,), jnp.float32))
        with pw.mesh("m", devices=2):
            scaled, extremes = step({"a": a, "b": b})
            seen["stand-in"] = scaled
            out = double(scaled)
        p.outputs((out, extremes))
    rng = np.random.default_rng(2)
    av, bv = rng.normal(size=(B, D)).astype(np.float32), rng.normal(size=(B,)).astype(np.float32)
    with pw.connect(server.address) as client:
        got = [np.asarray(v) for v in p.compile(client)(av, bv)]
    want_scaled, want_extremes = stats({"a": av, "b": bv})
    assert_matches_jax(got, [np.asarray(double(want_scaled)), want_extremes], rtol=0, atol=0)


def test_steps_on_two_workers_run_in_each_ones_sidecar(server):
    """A step runs in the sidecar of the worker holding its mesh (a mesh,
    like any SPMD computation's, is on one worker): a step on each of two
    meshes, one per worker, runs in two sidecars, neither this process;
    the second takes the first's output, moved between the workers."""

    def tag(x):
        return np.full((4, 3), os.getpid(), np.int32), x * 2

    step = pw.sidecar(
        tag, out_specs=lambda x: (jax.ShapeDtypeStruct((4, 3), jnp.int32), x), out_shardings=(P(), P("x"))
    )
    with pw.program("two_workers") as p:
        x = p.input(jax.ShapeDtypeStruct((4, 3), jnp.float32))
        with pw.mesh("a", devices=2):
            pid_a, y = step(x)
        with pw.mesh("b", devices=2):
            pid_b, z = step(y)
        p.outputs((pid_a, pid_b, z))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    with pw.connect(server.address) as client:
        got = [np.asarray(v) for v in p.compile(client)(x)]
    pid_a, pid_b = int(got[0][0, 0]), int(got[1][0, 0])
    assert pid_a != pid_b and os.getpid() not in (pid_a, pid_b), (pid_a, pid_b)
    np.testing.assert_array_equal(got[2], x * 4)


def test_a_failing_step_is_a_clear_error_and_the_session_goes_on(server):
    """An exception in the function fails the call with its traceback; an
    output other than out_specs says so; the next call works."""

    def check(x):
        if x[0] < 0:
            raise ValueError("negative first element")
        return x if x[1] >= 0 else x[:2]

    step = pw.sidecar(check, out_specs=jax.ShapeDtypeStruct((4,), jnp.float32))
    with pw.program("fails") as p:
        x = p.input(jax.ShapeDtypeStruct((4,), jnp.float32))
        with pw.mesh("m", devices=1):
            y = step(x)
        p.outputs(y)
    with pw.connect(server.address) as client:
        run = p.compile(client)
        with pytest.raises(pw.ArrayError) as raised:
            np.asarray(run(np.array([-1, 0, 0, 0], np.float32)))
        text = str(raised.value)
        assert "ValueError: negative first element" in text, text
        assert "Traceback" in text and "in check" in text and "_sidecar.py" not in text, text
        with pytest.raises(pw.ArrayError, match=re.escape("its out_specs say float32[4]")):
            np.asarray(run(np.array([1, -1, 0, 0], np.float32)))
        ok = np.array([1, 2, 3, 4], np.float32)
        np.testing.assert_array_equal(np.asarray(run(ok)), ok)


def test_capture_refuses_what_cannot_run():
    """Output specs without a shape, and a function that cannot be pickled,
    are refused where the block calls them."""
    bad_specs = pw.sidecar(lambda v: v, out_specs=(3,))
    lock = threading.Lock()

    def holds_a_lock(v):
        with lock:
            return v

    unpicklable = pw.sidecar(holds_a_lock, out_specs=jax.ShapeDtypeStruct((2,), jnp.float32))
    for fn, message in [(bad_specs, "leaf #0 is a int"), (unpicklable, "cannot be pickled")]:
        with pytest.raises(pw.ProgramError, match=message):
            with pw.program("refused") as p:
                x = p.input(jax.ShapeDtypeStruct((2,), jnp.float32))
                p.outputs(fn(x))


def test_pw_run_runs_python_steps_and_pw_opt_checks_the_function(tmp_path):
    """p.run through pw-run (a trace asked for) runs the step in its own
    sidecar; a damaged function is a diagnostic of pw-opt naming the
    computation."""
    add_one = pw.sidecar(lambda v: v + np.float32(1), out_specs=jax.ShapeDtypeStruct((3,), jnp.float32))
    with pw.program("via_pw_run") as p:
        x = p.input(jax.ShapeDtypeStruct((3,), jnp.float32))
        with pw.mesh("m", devices=1):
            y = add_one(x)
        p.outputs(y)
    v = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(p.run(v, trace=tmp_path / "trace.json"), v + 1)
    text = re.sub(r'pw.sidecar = "[^"]*"', 'pw.sidecar = "UFdQWUZOMDE="', p.text())
    with pytest.raises(pw.ToolError, match=r"computation @py_\w+: its `pw.sidecar` attribute is not a Python"):
        pw.tools.lower(text, devices=1)
