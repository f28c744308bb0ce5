"""Misuse of the front end: each case raises the documented exception, and
its message names the line of this file that did it (docs/frontend.md,
"Errors")."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import pw

from conftest import assert_names_line

S = jax.ShapeDtypeStruct
F32 = jnp.float32
HERE = __file__


def double(x):
    return x * 2


def not_jitted(x):
    return jnp.tanh(x) + 1  # misuse: op inside a plain function


def capture(body, shape=(8, 16), dtype=F32):
    """Captures a program whose one input goes through `body`."""
    with pw.program("misuse") as p:
        x = p.input(S(shape, dtype))
        p.outputs(body(x))
    return p


# -- TracingError: what a pw program cannot capture ------------------------------


def test_jnp_op_on_a_traced_value():
    with pytest.raises(pw.TracingError, match="'tanh'.*outside a jitted function") as e:
        capture(lambda x: jnp.tanh(x))  # misuse: jnp.tanh
    assert_names_line(e.value, HERE, "misuse: jnp.tanh")


def test_arithmetic_on_a_traced_value():
    with pytest.raises(pw.TracingError, match="outside a jitted function") as e:
        capture(lambda x: x + 1)  # misuse: arithmetic
    assert_names_line(e.value, HERE, "misuse: arithmetic")


def test_non_jitted_function_on_a_traced_value():
    with pytest.raises(pw.TracingError, match="only jax.jit functions") as e:
        capture(not_jitted)
    assert_names_line(e.value, HERE, "misuse: op inside a plain function")


def test_jnp_reduction_on_a_traced_value():
    with pytest.raises(pw.TracingError, match="JAX library function") as e:
        capture(lambda x: jnp.sum(x))  # misuse: jnp.sum
    assert_names_line(e.value, HERE, "misuse: jnp.sum")


def test_indexing_a_traced_value():
    with pytest.raises(pw.TracingError, match="outside a jitted function") as e:
        capture(lambda x: x[0])  # misuse: indexing
    assert_names_line(e.value, HERE, "misuse: indexing")


def test_custom_jvp_function_on_a_traced_value():
    with pytest.raises(pw.TracingError, match="custom_jvp") as e:
        capture(lambda x: jax.nn.relu(x))  # misuse: jax.nn.relu
    assert_names_line(e.value, HERE, "misuse: jax.nn.relu")


def test_if_on_a_traced_value():
    def body(x):
        y = jax.jit(double)(x)
        if y:  # misuse: if
            return y
        return x

    with pytest.raises(pw.TracingError, match=r"Python control flow \(bool\(\)\)") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: if")


def test_while_on_a_traced_scalar():
    def body(x):
        total = jax.jit(lambda a: a.sum())(x)
        while total:  # misuse: while
            pass
        return x

    with pytest.raises(pw.TracingError, match="control flow") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: while")


@pytest.mark.parametrize(
    "convert, what",
    [(float, "float()"), (int, "int()"), (list, "iteration"), (range, "as an index")],
)
def test_python_conversions_of_a_traced_value(convert, what):
    def body(x):
        s = jax.jit(lambda a: a.sum().astype(jnp.int32))(x)
        convert(s)  # misuse: conversion
        return x

    with pytest.raises(pw.TracingError, match=f"control flow \\({what}") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: conversion")


def test_item_of_a_traced_value():
    with pytest.raises(pw.TracingError, match=r"\.item\(\)") as e:
        capture(lambda x: x.item())  # misuse: item
    assert_names_line(e.value, HERE, "misuse: item")


def test_numpy_conversion_of_a_traced_value():
    with pytest.raises(pw.TracingError, match="numpy array") as e:
        capture(lambda x: np.asarray(x))  # misuse: np.asarray
    assert_names_line(e.value, HERE, "misuse: np.asarray")


def test_constant_array_argument():
    add = jax.jit(lambda a, b: a + b)
    with pytest.raises(pw.TracingError, match="argument #1 of <lambda> is a constant") as e:
        capture(lambda x: add(x, np.ones((8, 16), np.float32)))  # misuse: constant
    assert_names_line(e.value, HERE, "misuse: constant")


def test_python_scalar_argument_that_is_not_static():
    scale = jax.jit(lambda a, k: a * k)
    with pytest.raises(pw.TracingError, match="static_argnums") as e:
        capture(lambda x: scale(x, 2.0))  # misuse: scalar
    assert_names_line(e.value, HERE, "misuse: scalar")


def test_vmap_around_a_jitted_call():
    with pytest.raises(pw.TracingError, match="JAX transformation") as e:
        capture(lambda x: jax.vmap(jax.jit(double))(x))  # misuse: vmap
    assert_names_line(e.value, HERE, "misuse: vmap")


def test_grad_around_a_jitted_call():
    loss = jax.jit(lambda a: (a * a).sum())
    with pytest.raises(pw.TracingError, match="JAX transformation") as e:
        capture(lambda x: jax.grad(loss)(x))  # misuse: grad
    assert_names_line(e.value, HERE, "misuse: grad")


def test_value_used_after_its_block():
    p = capture(lambda x: jax.jit(double)(x))
    (leaked,) = [v for v, _, _ in p._inputs]
    with pytest.raises(jax.errors.UnexpectedTracerError, match=r"pw.program\('misuse'\)"):
        jax.jit(double)(leaked)


# -- ProgramError: a program, mesh or sharding that cannot be -------------------


def test_partition_spec_naming_an_axis_the_mesh_lacks():
    f = jax.jit(double, in_shardings=P("y"), out_shardings=P())

    def body(x):
        with pw.mesh("m", devices=2):
            return f(x)  # misuse: missing axis

    with pytest.raises(pw.ProgramError, match=r"names an axis the mesh lacks, so mesh 'm' \{'x': 2\}") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: missing axis")


def test_input_sharding_that_does_not_divide():
    f = jax.jit(double, in_shardings=P("x"), out_shardings=P())

    def body(x):
        with pw.mesh("m", devices=3):
            return f(x)  # misuse: indivisible input

    with pytest.raises(pw.ProgramError, match="does not divide") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: indivisible input")


def test_output_sharding_that_does_not_divide():
    f = jax.jit(double, out_shardings=P(None, "x"))

    def body(x):
        with pw.unplaced(devices=3):
            return f(x)  # misuse: indivisible output

    with pytest.raises(pw.ProgramError, match=r"does not divide the array, so the pw.unplaced mesh \{'x': 3\}") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: indivisible output")


def test_partition_spec_outside_any_mesh():
    f = jax.jit(double, in_shardings=P("x"))
    with pytest.raises(pw.ProgramError, match="outside any mesh") as e:
        capture(lambda x: f(x))  # misuse: no mesh
    assert_names_line(e.value, HERE, "misuse: no mesh")


def test_function_sharded_over_a_mesh_of_another_shape():
    other = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("a", "b"))
    f = jax.jit(double, in_shardings=NamedSharding(other, P("a")))

    def body(x):
        with pw.mesh("m", devices=2):
            return f(x)  # misuse: other mesh

    with pytest.raises(pw.ProgramError, match=r"sharded over a mesh \{'a': 1, 'b': 1\} but runs on mesh 'm'") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: other mesh")


def test_nested_programs():
    def body(x):
        with pw.program("inner"):  # misuse: nested
            pass

    with pytest.raises(pw.ProgramError, match="cannot be nested") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: nested")


def test_outputs_that_are_not_program_values():
    with pytest.raises(pw.ProgramError, match="outputs must be values of this program, got ndarray") as e:
        with pw.program("numpy_out") as p:
            p.input(S((2,), F32))
            p.outputs(np.ones(3))  # misuse: numpy output
    assert_names_line(e.value, HERE, "misuse: numpy output")


def test_outputs_from_another_program():
    first = capture(lambda x: x)
    (foreign,) = [v for v, _, _ in first._inputs]
    with pytest.raises(pw.ProgramError, match="got Value") as e:
        with pw.program("second") as p:
            p.input(S((2,), F32))
            p.outputs(foreign)  # misuse: foreign output
    assert_names_line(e.value, HERE, "misuse: foreign output")


def test_no_outputs():
    with pytest.raises(pw.ProgramError, match="declared no outputs") as e:
        with pw.program("silent") as p:  # misuse: no outputs
            p.input(S((2,), F32))
    assert_names_line(e.value, HERE, "misuse: no outputs")


def test_empty_outputs():
    with pytest.raises(pw.ProgramError, match="at least one output") as e:
        with pw.program("empty") as p:
            p.input(S((2,), F32))
            p.outputs({})  # misuse: empty outputs
    assert_names_line(e.value, HERE, "misuse: empty outputs")


def test_outputs_declared_twice():
    with pytest.raises(pw.ProgramError, match="called before") as e:
        with pw.program("twice") as p:
            x = p.input(S((2,), F32))
            p.outputs(x)
            p.outputs(x)  # misuse: outputs twice
    assert_names_line(e.value, HERE, "misuse: outputs twice")


def test_mesh_outside_a_program():
    with pytest.raises(pw.ProgramError, match="inside `with pw.program") as e:
        with pw.mesh("m", devices=2):  # misuse: mesh outside
            pass
    assert_names_line(e.value, HERE, "misuse: mesh outside")


def test_mesh_redeclared_with_another_shape():
    def body(x):
        with pw.mesh("m", devices=2):
            pass
        with pw.mesh("m", devices=4):  # misuse: redeclared
            pass
        return x

    with pytest.raises(pw.ProgramError, match="was declared before") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: redeclared")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(devices=4, axes=("x", "y")), "exactly one axis"),
        (dict(shape=(2, 2), axes=("x",)), "does not match axes"),
        (dict(shape=(2, 2), axes=("x", "y"), devices=8), "has 4 devices, not 8"),
        (dict(shape=(2, 2), axes=("x", "x")), "distinct"),
        (dict(devices=0), "sizes >= 1"),
        (dict(devices=2, same_island_as="nowhere"), "undeclared mesh 'nowhere'"),
    ],
)
def test_bad_mesh_declarations(kwargs, message):
    def body(x):
        with pw.mesh("m", **kwargs):  # misuse: bad mesh
            pass
        return x

    with pytest.raises(pw.ProgramError, match=message) as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: bad mesh")


def test_mesh_name_taken_by_a_computation():
    def body(x):
        y = jax.jit(double)(x)
        with pw.mesh("jit_double", devices=1):  # misuse: mesh name
            pass
        return y

    with pytest.raises(pw.ProgramError, match="already the name of a computation") as e:
        capture(body)
    assert_names_line(e.value, HERE, "misuse: mesh name")


def test_unsupported_input_dtype():
    with pytest.raises(pw.ProgramError, match="cannot hold <U3") as e:
        with pw.program("strings") as p:
            p.input(S((2,), np.dtype("<U3")))  # misuse: string input
    assert_names_line(e.value, HERE, "misuse: string input")


def test_64_bit_input_without_x64():
    assert not jax.config.jax_enable_x64
    with pytest.raises(pw.ProgramError, match="jax_enable_x64") as e:
        with pw.program("wide") as p:
            p.input(S((2,), np.float64))  # misuse: f64 input
    assert_names_line(e.value, HERE, "misuse: f64 input")


def test_unsupported_result_dtype():
    to_key = jax.jit(lambda a: jax.random.key(0))
    with pytest.raises(pw.ProgramError, match=r"cannot hold key<fry> \(result #0 of <lambda>\)") as e:
        capture(lambda x: to_key(x))  # misuse: key result
    assert_names_line(e.value, HERE, "misuse: key result")


@pytest.mark.parametrize(
    "mesh, sharding, message",
    [
        (None, P("x"), "needs a mesh"),
        ("nowhere", None, "unknown mesh 'nowhere'"),
        ("m", P("y"), "axis 'y' is not an axis of mesh 'm'"),
        ("m", P(None, "x"), "dimension 1 of size 3 does not divide by 2"),
        ("m", P("x", "x"), "used twice"),
        ("m", P("x", None, None), "has 3 entries for an array of rank 2"),
    ],
)
def test_bad_input_placement(mesh, sharding, message):
    with pytest.raises(pw.ProgramError, match=message) as e:
        with pw.program("placed_inputs") as p:
            with pw.mesh("m", devices=2):
                p.input(S((4, 3), F32), mesh=mesh, sharding=sharding)  # misuse: input placement
    assert_names_line(e.value, HERE, "misuse: input placement")


def test_text_before_the_block_ends():
    with pytest.raises(pw.ProgramError, match="only after its `with` block") as e:
        with pw.program("early") as p:
            x = p.input(S((2,), F32))
            p.outputs(x)
            p.text()  # misuse: early text
    assert_names_line(e.value, HERE, "misuse: early text")


def test_text_of_a_failed_capture():
    p = pw.program("failed")
    with pytest.raises(pw.TracingError):
        with p:
            p.outputs(jnp.tanh(p.input(S((2,), F32))))
    with pytest.raises(pw.ProgramError, match="capture of program 'failed' failed") as e:
        p.save("/nonexistent/never-written.mlir")  # misuse: failed save
    assert_names_line(e.value, HERE, "misuse: failed save")


@pytest.mark.parametrize(
    "arrays, message",
    [
        ((np.ones((8, 16), np.float32),), "takes 2 inputs, got 1"),
        ((np.ones((8, 16), np.float32), np.ones((16,), np.float32)), r"input #1 is float32\[16\]"),
        ((np.ones((8, 16), np.float32), np.ones((16, 4), np.int32)), r"input #1 is int32\[16, 4\]"),
    ],
)
def test_run_with_inputs_that_do_not_match(arrays, message):
    with pw.program("shapes") as p:
        x = p.input(S((8, 16), F32))
        w = p.input(S((16, 4), F32))
        p.outputs(jax.jit(lambda a, b: a @ b)(x, w))
    with pytest.raises(pw.ProgramError, match=message) as e:
        p.run(*arrays)  # misuse: run inputs
    assert_names_line(e.value, HERE, "misuse: run inputs")


def test_jitted_library_function_counts_as_a_library_op():
    # Documented limit: jnp.tanh is itself a jax.jit function of JAX's.
    with pytest.raises(pw.TracingError, match="JAX library function") as e:
        capture(lambda x: jax.jit(jnp.tanh)(x))  # misuse: jitted library op
    assert_names_line(e.value, HERE, "misuse: jitted library op")


# -- ToolError: pw-opt cannot lower the program ------------------------------------

TOPOLOGY = '[[island]]\nname = "a"\nkind = "cpu"\ndevices = [0, 1]\n'


def test_mesh_needing_more_devices_than_the_topology_has(tmp_path):
    topology = tmp_path / "small.toml"
    topology.write_text(TOPOLOGY)
    f = jax.jit(double, in_shardings=P("x"), out_shardings=P("x"))
    with pw.program("too_big") as p:
        x = p.input(S((8, 16), F32))
        with pw.mesh("big", devices=4):  # misuse: 4 devices
            y = f(x)
        p.outputs(y)
    with pytest.raises(pw.ToolError, match="mesh @big needs 4 devices on one island; the largest such island has 2") as e:
        p.lower(topology=topology)
    assert_names_line(e.value, HERE, "misuse: 4 devices")
    # The quoted source line of pw-opt (a line of its input) is left out.
    assert "pw.mesh @big" not in str(e.value)
    with pytest.raises(pw.ToolError, match="needs 4 devices") as e:
        p.lower(devices=2)
    assert_names_line(e.value, HERE, "misuse: 4 devices")


def test_mesh_of_a_kind_the_topology_lacks(tmp_path):
    topology = tmp_path / "cpus.toml"
    topology.write_text(TOPOLOGY)
    with pw.program("wrong_kind") as p:
        x = p.input(S((8, 16), F32))
        with pw.mesh("accel", devices=2, kind="gpu"):  # misuse: gpu kind
            y = jax.jit(double)(x)
        p.outputs(y)
    with pytest.raises(pw.ToolError) as e:
        p.lower(topology=topology)
    assert_names_line(e.value, HERE, "misuse: gpu kind")
    assert "gpu" in str(e.value)


def test_missing_topology_file(tmp_path):
    p = capture(lambda x: jax.jit(double)(x))
    with pytest.raises(pw.ToolError, match="does not exist"):
        p.lower(topology=tmp_path / "nope.toml")


def test_missing_tool(monkeypatch, tmp_path):
    import pw.tools

    monkeypatch.setattr(pw.tools, "_REPO", str(tmp_path))
    monkeypatch.setenv("PW_BIN_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    p = capture(lambda x: jax.jit(double)(x))
    with pytest.raises(pw.ToolError, match="pw-opt not found"):
        p.lower()
