"""`p.run` executes captured programs through pw-run and matches plain JAX.

These are acceptance tests of pw-run: without the binary they fail (p.run
raises ToolError "pw-run not found"), they do not skip. pw-run's contract
is in pw/tools.py (`run`).
"""

from __future__ import annotations

import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pw

from conftest import REPO, assert_names_line

SEED = 20261130


def assert_matches_jax(outputs, expected, rtol=1e-5, atol=1e-6):
    assert len(outputs) == len(expected)
    for i, (got, want) in enumerate(zip(outputs, expected)):
        assert got.shape == want.shape, f"output {i}: shape {got.shape}, JAX {want.shape}"
        assert got.dtype == want.dtype, f"output {i}: dtype {got.dtype}, JAX {want.dtype}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {i}")


@pytest.mark.parametrize("name", ["pipeline", "rl_step", "partially_placed", "pipeline_train", "rl_loop"])
def test_example_runs_like_plain_jax(examples, name):
    """Every example of examples/generate.py (the pipeline, the RL step, the
    partially placed program, the pipeline training step, the RL loop):
    captured, run by pw-run, compared with the same block run by plain JAX
    on the same inputs."""
    block, make_inputs = examples.EXAMPLES[name]
    inputs = make_inputs(np.random.default_rng(SEED))
    program = examples.capture(name, block, inputs)
    expected = examples.reference(block, inputs)
    outputs = program.run(*inputs)
    assert isinstance(outputs, list)  # the blocks return lists
    assert_matches_jax(outputs, expected)


def test_two_stage_pipeline_with_pytrees():
    """The docs/frontend.md example: pytrees in and out, two meshes."""

    def layer(x, p):
        return jnp.tanh(x @ p["w"] + p["b"])

    stage0 = jax.jit(layer, in_shardings=(P(), {"w": P(None, "x"), "b": P("x")}), out_shardings=P(None, "x"))
    stage1 = jax.jit(layer, in_shardings=(P(None, "x"), {"w": P("x", None), "b": P()}), out_shardings=P())
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    params = [
        {"w": rng.standard_normal((16, 32), dtype=np.float32) / 4, "b": rng.standard_normal((32,), dtype=np.float32)},
        {"w": rng.standard_normal((32, 8), dtype=np.float32) / 6, "b": rng.standard_normal((8,), dtype=np.float32)},
    ]
    with pw.program("two_stage") as p:
        xv, pv = p.inputs((x, params))
        with pw.mesh("stage0", devices=2):
            h = stage0(xv, pv[0])
        with pw.mesh("stage1", devices=2):
            y = stage1(h, pv[1])
        p.outputs({"y": y, "h": h})
    out = p.run(x, params)
    h_ref = jax.jit(layer)(x, params[0])
    y_ref = jax.jit(layer)(h_ref, params[1])
    assert set(out) == {"y", "h"}
    assert_matches_jax([out["h"], out["y"]], [np.asarray(h_ref), np.asarray(y_ref)])


def test_bf16_and_i32():
    """bf16 arrays cross .npy as raw 2-byte values and come back as bf16."""

    def embed(tokens, table):
        return jnp.take(table, tokens, axis=0).astype(jnp.bfloat16)

    def project(h, w):
        return (h @ w).astype(jnp.float32), jnp.argmax(h, axis=-1).astype(jnp.int32)

    rng = np.random.default_rng(SEED)
    tokens = rng.integers(0, 16, size=(8,), dtype=np.int32)
    table = rng.standard_normal((16, 4), dtype=np.float32)
    w = rng.standard_normal((4, 4), dtype=np.float32).astype(jnp.bfloat16)
    with pw.program("dtypes") as p:
        t, tb, wv = p.inputs([tokens, table, w])
        with pw.mesh("a", devices=1):
            h = jax.jit(embed)(t, tb)
        with pw.mesh("b", devices=2):
            y, idx = jax.jit(project, in_shardings=(P("x"), P()), out_shardings=(P("x"), P("x")))(h, wv)
        p.outputs([h, y, idx])
    got = p.run(tokens, table, w)
    h_ref = jax.jit(embed)(tokens, table)
    y_ref, idx_ref = jax.jit(project)(h_ref, w)
    assert [g.dtype for g in got] == [np.dtype(jnp.bfloat16), np.dtype(np.float32), np.dtype(np.int32)]
    np.testing.assert_array_equal(got[0].astype(np.float32), np.asarray(h_ref).astype(np.float32))
    np.testing.assert_allclose(got[1], np.asarray(y_ref), rtol=1e-2, atol=1e-2)
    np.testing.assert_array_equal(got[2], np.asarray(idx_ref))


def test_complex_and_float8():
    """complex64 and float8 arrays in and out of pw-run (float8 crosses .npy
    as raw bytes, read as the type the program declares), as JAX computes them."""

    def rotate(z, f8):
        return z * (1 - 2j), (f8.astype(jnp.float32) * 2).astype(jnp.float8_e4m3fn), jnp.abs(z)

    z = (np.arange(8, dtype=np.float32) - 4).astype(np.complex64) * np.complex64(0.5 + 1j)
    f8 = np.linspace(-2, 2, 8, dtype=np.float32).astype(jnp.float8_e4m3fn)
    with pw.program("complex_f8") as p:
        zi, fi = p.inputs([z, f8])
        with pw.mesh("m", devices=2):
            out = jax.jit(rotate, in_shardings=(P("x"), P("x")), out_shardings=(P("x"), P("x"), P()))(zi, fi)
        p.outputs(list(out))
    got = p.run(z, f8)
    want = [np.asarray(w) for w in jax.jit(rotate)(z, f8)]
    assert [g.dtype for g in got] == [w.dtype for w in want]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1].view(np.uint8), want[1].view(np.uint8))
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def double(x):
    return x * 2


def test_runs_from_any_directory(monkeypatch, tmp_path):
    """pw-run finds the PJRT plugin of the venv running the front end."""
    monkeypatch.delenv("PW_VENV", raising=False)
    monkeypatch.delenv("PW_PJRT_PLUGIN", raising=False)
    monkeypatch.chdir(tmp_path)
    with pw.program("anywhere") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("m", devices=2):
            y = jax.jit(double, in_shardings=P("x"), out_shardings=P())(x)
        p.outputs(y)
    x_np = np.arange(32, dtype=np.float32).reshape(8, 4)
    np.testing.assert_array_equal(p.run(x_np), x_np * 2)


def test_mesh_needing_more_devices_than_the_run_has(tmp_path):
    """A mesh the devices cannot satisfy: ToolError naming the mesh's line."""
    with pw.program("too_big") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 4), jnp.float32))
        with pw.mesh("big", devices=4):  # misuse: 4 devices at run time
            y = jax.jit(double, in_shardings=P("x"), out_shardings=P("x"))(x)
        p.outputs(y)
    x_np = np.ones((8, 4), np.float32)
    np.testing.assert_array_equal(p.run(x_np, devices=4), x_np * 2)
    with pytest.raises(pw.ToolError, match="mesh @big needs 4 devices") as e:
        p.run(x_np, devices=2)
    assert_names_line(e.value, __file__, "misuse: 4 devices at run time")
    topology = tmp_path / "small.toml"
    topology.write_text('[[island]]\nname = "a"\nkind = "cpu"\ndevices = [0, 1]\n')
    with pytest.raises(pw.ToolError, match="mesh @big needs 4 devices") as e:
        p.run(x_np, topology=topology)
    assert_names_line(e.value, __file__, "misuse: 4 devices at run time")


def test_the_example_of_docs_frontend_md_runs(monkeypatch, tmp_path):
    """The runnable examples of docs/frontend.md: capture, save, lower, run;
    a training loop on a session (their own assertions compare with JAX)."""
    with open(os.path.join(REPO, "docs", "frontend.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert len(blocks) == 3, "docs/frontend.md: the pipeline, the training loop and the Python step"
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "docs/frontend.md", "exec"), {"__name__": "frontend_md_example"})
    assert (tmp_path / "pipeline.mlir").exists()
