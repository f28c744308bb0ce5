"""What the tracer captures: the text of small programs, checked by pw-opt."""

from __future__ import annotations

import functools
import os
import re
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import pw
from pw.tools import find_tool

from conftest import REPO, assert_verifies, pw_opt

S = jax.ShapeDtypeStruct
F32 = jnp.float32


def layer(x, w):
    return jnp.tanh(x @ w)


def double(x):
    return x * 2


def calls(program) -> list[str]:
    """The body lines of the program's @main, stripped."""
    text = program.text()
    body = text[text.index("func.func @main") :].splitlines()[1:-2]
    return [line.strip() for line in body]


def computations(program) -> list[str]:
    return re.findall(r'"builtin.module"\(\) <\{sym_name = "([^"]+)"\}>', program.text())


def computation_text(program, name: str) -> str:
    text = program.text()
    start = text.index(f'"builtin.module"() <{{sym_name = "{name}"}}>')
    end = text.find('"builtin.module"()', start + 1)
    return text[start : end if end >= 0 else text.index("func.func @main")]


# -- placement ---------------------------------------------------------------


def test_unplaced_call():
    with pw.program("one") as p:
        x = p.input(S((8, 16), F32))
        w = p.input(S((16, 4), F32))
        p.outputs(jax.jit(layer)(x, w))
    text = p.text()
    assert text.startswith('module @one {\n  "builtin.module"() <{sym_name = "jit_layer"}> ({\n')
    assert text.endswith(
        "  func.func @main(%arg0: !pw.array<8x16xf32>, %arg1: !pw.array<16x4xf32>) -> !pw.array<8x4xf32> {\n"
        "    %0 = pw.call @jit_layer(%arg0, %arg1) : (!pw.array<8x16xf32>, !pw.array<16x4xf32>) -> !pw.array<8x4xf32>\n"
        "    return %0 : !pw.array<8x4xf32>\n"
        "  }\n"
        "}\n"
    )
    module = computation_text(p, "jit_layer")
    assert "mhlo.num_partitions = 1 : i32" in module
    assert 'sym_name = "main", sym_visibility = "public"' in module
    assert_verifies(p)


def test_placed_calls_on_meshes():
    with pw.program("two_stages") as p:
        x = p.input(S((8, 16), F32))
        w0 = p.input(S((16, 16), F32))
        w1 = p.input(S((16, 4), F32))
        with pw.mesh("stage0", devices=2):
            h = jax.jit(layer)(x, w0)
        with pw.mesh("stage1", shape=(2, 2), axes=("data", "model"), kind="cpu", same_island_as="stage0"):
            y = jax.jit(layer)(h, w1)
        p.outputs(y)
    text = p.text()
    assert '  pw.mesh @stage0 ["x"=2]\n' in text
    assert '  pw.mesh @stage1 ["data"=2, "model"=2] {kind = "cpu", same_island_as = @stage0}\n' in text
    assert calls(p) == [
        "%0 = pw.call @jit_layer(%arg0, %arg1) on @stage0 : (!pw.array<8x16xf32>, !pw.array<16x16xf32>)"
        " -> !pw.array<8x16xf32, @stage0>",
        "%1 = pw.call @jit_layer_1(%0, %arg2) on @stage1 : (!pw.array<8x16xf32, @stage0>, !pw.array<16x4xf32>)"
        " -> !pw.array<8x4xf32, @stage1>",
        "return %1 : !pw.array<8x4xf32, @stage1>",
    ]
    # Each computation is lowered for its mesh: as many partitions, the
    # mesh's axes, and replicated where no sharding was given.
    stage0 = computation_text(p, "jit_layer")
    assert "mhlo.num_partitions = 2 : i32" in stage0
    assert '#sdy.mesh<["x"=2]>' in stage0
    assert "#sdy.sharding<@mesh, [{}, {}]>" in stage0
    stage1 = computation_text(p, "jit_layer_1")
    assert "mhlo.num_partitions = 4 : i32" in stage1
    assert '#sdy.mesh<["data"=2, "model"=2]>' in stage1
    assert_verifies(p)


def test_unplaced_block_lowers_for_its_shape_without_a_mesh():
    with pw.program("open") as p:
        x = p.input(S((8, 16), F32))
        with pw.unplaced(devices=2):
            y = jax.jit(double, in_shardings=P("x"), out_shardings=P("x"))(x)
        p.outputs(y)
    assert "pw.mesh" not in p.text()
    assert calls(p)[0] == "%0 = pw.call @jit_double(%arg0) : (!pw.array<8x16xf32>) -> !pw.array<8x16xf32>"
    module = computation_text(p, "jit_double")
    assert "mhlo.num_partitions = 2 : i32" in module
    assert '#sdy.sharding<@mesh, [{"x"}, {}]>' in module
    assert_verifies(p)
    # The passes place it: on a new 2-device mesh here.
    lowered = p.lower()
    assert re.search(r'pw.mesh @\w+ \["x"=2\] \{devices = array<i64: \d+, \d+>\}', lowered)


def test_inputs_placed_and_sharded():
    with pw.program("inputs") as p:
        with pw.mesh("m", shape=(2, 2), axes=("x", "y")):
            a = p.input(S((8, 4), F32), mesh="m", sharding=P(("x", "y")))
            b = p.input(S((8, 4), F32), mesh="m")
            c = p.input(S((8, 4), F32))
            y = jax.jit(lambda a, b, c: a + b + c)(a, b, c)
        p.outputs(y)
    assert (
        '%arg0: !pw.array<8x4xf32, @m, [{"x", "y"}, {}]>, %arg1: !pw.array<8x4xf32, @m>, %arg2: !pw.array<8x4xf32>'
        in p.text()
    )
    assert_verifies(p)


# -- shardings -----------------------------------------------------------------


def test_partition_specs_resolve_on_the_block_mesh():
    f = jax.jit(layer, in_shardings=(P("x", None), P(None, "y")), out_shardings=P("x", "y"))
    with pw.program("specs") as p:
        x = p.input(S((8, 16), F32))
        w = p.input(S((16, 4), F32))
        with pw.mesh("m", shape=(2, 2), axes=("x", "y")):
            y = f(x, w)
        p.outputs(y)
    module = computation_text(p, "jit_layer")
    assert (
        'arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, '
        '{sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}]' in module
    )
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>' in module
    assert "mhlo.num_partitions = 4 : i32" in module
    assert_verifies(p)


def test_named_sharding_is_reexpressed_on_the_block_mesh():
    # A NamedSharding over a mesh of the same axes and sizes (here a real
    # one-device mesh) is taken as a sharding over the pw mesh.
    real = Mesh(np.array(jax.devices()[:1]), ("x",))
    f = jax.jit(double, in_shardings=NamedSharding(real, P("x")), out_shardings=NamedSharding(real, P()))
    with pw.program("named") as p:
        x = p.input(S((8, 16), F32))
        with pw.mesh("one", devices=1):
            y = f(x)
        p.outputs(y)
    module = computation_text(p, "jit_double")
    assert '#sdy.mesh<["x"=1]>' in module
    assert "mhlo.num_partitions = 1 : i32" in module
    assert calls(p)[0].endswith("-> !pw.array<8x16xf32, @one>")
    assert_verifies(p)


def test_named_sharding_outside_a_mesh_keeps_its_own_mesh():
    real = Mesh(np.array(jax.devices()[:1]), ("x",))
    f = jax.jit(double, in_shardings=NamedSharding(real, P("x")))
    with pw.program("named_open") as p:
        x = p.input(S((8, 16), F32))
        p.outputs(f(x))
    assert calls(p)[0] == "%0 = pw.call @jit_double(%arg0) : (!pw.array<8x16xf32>) -> !pw.array<8x16xf32>"
    assert_verifies(p)


# -- one computation, many calls -------------------------------------------------


def test_same_function_called_many_times_is_one_computation():
    f = jax.jit(layer)
    with pw.program("many") as p:
        x = p.input(S((8, 8), F32))
        w = p.input(S((8, 8), F32))
        h = x
        for _ in range(3):
            h = f(h, w)
        h = jax.jit(layer)(h, w)  # a fresh jax.jit object of the same function
        p.outputs(h)
    assert computations(p) == ["jit_layer"]
    assert [line.split(" = ")[1].split("(")[0] for line in calls(p)[:-1]] == ["pw.call @jit_layer"] * 4
    assert_verifies(p)


def test_same_function_at_two_signatures_is_two_computations():
    with pw.program("sigs") as p:
        big = p.input(S((8, 8), F32))
        small = p.input(S((4, 8), F32))
        w = p.input(S((8, 8), F32))
        outs = []
        # Redefined each iteration: new function objects, new jaxprs, the
        # same two computations.
        for _ in range(2):

            def step(x, w):
                return jnp.tanh(x @ w)

            outs += [jax.jit(step)(big, w), jax.jit(step)(small, w)]
        p.outputs(outs)
    assert computations(p) == ["jit_step", "jit_step_1"]
    assert [re.search(r"@(jit_\w+)", line).group(1) for line in calls(p)[:-1]] == [
        "jit_step",
        "jit_step_1",
        "jit_step",
        "jit_step_1",
    ]
    assert_verifies(p)


def test_different_functions_with_identical_text_keep_their_names():
    def f(x):
        return x * 2

    def g(x):
        return x * 2

    with pw.program("twins") as p:
        x = p.input(S((4,), F32))
        p.outputs([jax.jit(f)(x), jax.jit(g)(x), jax.jit(f)(x)])
    assert computations(p) == ["jit_f", "jit_g"]
    assert_verifies(p)


def test_same_function_on_meshes_of_one_shape_is_one_computation():
    f = jax.jit(double, in_shardings=P("x"), out_shardings=P("x"))
    with pw.program("meshes") as p:
        x = p.input(S((8, 4), F32))
        with pw.mesh("a", devices=2):
            y = f(x)
        with pw.mesh("b", devices=2):
            y = f(y)
        with pw.mesh("c", devices=4):
            y = f(y)
        p.outputs(y)
    assert computations(p) == ["jit_double", "jit_double_1"]
    assert [line.split(" : ")[0] for line in calls(p)[:-1]] == [
        "%0 = pw.call @jit_double(%arg0) on @a",
        "%1 = pw.call @jit_double(%0) on @b",
        "%2 = pw.call @jit_double_1(%1) on @c",
    ]
    assert_verifies(p)


# -- static arguments, pytrees, loops ----------------------------------------------


@functools.partial(jax.jit, static_argnums=(1,), static_argnames=("activation",))
def block(params, depth, x, activation="tanh"):
    for _ in range(depth):
        x = x @ params["w"] + params["b"]
    y = jnp.tanh(x) if activation == "tanh" else x
    return {"y": y, "stats": (jnp.sum(y), jnp.mean(y))}


def test_static_arguments_and_pytrees():
    with pw.program("trees") as p:
        params = p.inputs({"w": S((4, 4), F32), "b": S((4,), F32)})
        x = p.input(S((2, 4), F32))
        a = block(params, 1, x)
        b = block(params, 2, a["y"], activation="none")
        c = block(params, 1, b["y"])
        p.outputs({"first": a["stats"], "last": c})
    # Static values are part of the signature: (1, tanh) twice, (2, none) once.
    assert computations(p) == ["jit_block", "jit_block_1"]
    # Inputs are numbered in pytree leaf order: b, w (sorted keys), then x.
    assert "func.func @main(%arg0: !pw.array<4xf32>, %arg1: !pw.array<4x4xf32>, %arg2: !pw.array<2x4xf32>)" in p.text()
    assert calls(p) == [
        "%0:3 = pw.call @jit_block(%arg0, %arg1, %arg2) : (!pw.array<4xf32>, !pw.array<4x4xf32>, "
        "!pw.array<2x4xf32>) -> (!pw.array<f32>, !pw.array<f32>, !pw.array<2x4xf32>)",
        "%1:3 = pw.call @jit_block_1(%arg0, %arg1, %0#2) : (!pw.array<4xf32>, !pw.array<4x4xf32>, "
        "!pw.array<2x4xf32>) -> (!pw.array<f32>, !pw.array<f32>, !pw.array<2x4xf32>)",
        "%2:3 = pw.call @jit_block(%arg0, %arg1, %1#2) : (!pw.array<4xf32>, !pw.array<4x4xf32>, "
        "!pw.array<2x4xf32>) -> (!pw.array<f32>, !pw.array<f32>, !pw.array<2x4xf32>)",
        "return %0#0, %0#1, %2#0, %2#1, %2#2 : !pw.array<f32>, !pw.array<f32>, !pw.array<f32>, "
        "!pw.array<f32>, !pw.array<2x4xf32>",
    ]
    assert p.num_inputs == 3 and p.num_outputs == 5
    assert p.unflatten_outputs(range(5)) == {"first": (0, 1), "last": {"stats": (2, 3), "y": 4}}
    assert_verifies(p)


def test_python_loop_of_microbatches_is_unrolled():
    stage = [jax.jit(layer), jax.jit(lambda h, w: h @ w)]
    with pw.program("microbatches") as p:
        xs = p.inputs([S((2, 8), F32)] * 4)
        w0, w1 = p.inputs([S((8, 8), F32), S((8, 8), F32)])
        ys = []
        for x in xs:
            with pw.mesh("s0", devices=1):
                h = stage[0](x, w0)
            with pw.mesh("s1", devices=1):
                ys.append(stage[1](h, w1))
        p.outputs(ys)
    body = calls(p)
    assert len(body) == 9 and body[-1].startswith("return %1, %3, %5, %7 :")
    assert computations(p) == ["jit_layer", "jit__lambda_"]
    assert [line.split(" : ")[0] for line in body[:4]] == [
        "%0 = pw.call @jit_layer(%arg0, %arg4) on @s0",
        "%1 = pw.call @jit__lambda_(%0, %arg5) on @s1",
        "%2 = pw.call @jit_layer(%arg1, %arg4) on @s0",
        "%3 = pw.call @jit__lambda_(%2, %arg5) on @s1",
    ]
    assert_verifies(p)


def test_closed_over_values_become_operands():
    with pw.program("closure") as p:
        x = p.input(S((4,), F32))
        y = jax.jit(double)(x)
        z = jax.jit(lambda a: a + y)(x)
        p.outputs(z)
    assert calls(p)[1].startswith("%1 = pw.call @jit__lambda_(%0, %arg0)")
    assert_verifies(p)


def test_constants_built_in_the_block_run_eagerly():
    with pw.program("consts") as p:
        x = p.input(S((4,), F32))
        scale = jnp.ones(()) * 3  # no program value involved: plain JAX
        assert float(scale) == 3.0
        assert jax.nn.relu(jnp.arange(3.0) - 1).tolist() == [0.0, 0.0, 1.0]  # custom_jvp too
        p.outputs(jax.jit(functools.partial(lambda a, k: a * k, k=float(scale)))(x))
    assert len(calls(p)) == 2
    assert_verifies(p)


def test_output_may_be_an_input_and_repeat():
    with pw.program("passthrough") as p:
        x = p.input(S((4,), F32))
        y = jax.jit(double)(x)
        p.outputs((x, y, y))
    assert calls(p)[-1] == "return %arg0, %0, %0 : !pw.array<4xf32>, !pw.array<4xf32>, !pw.array<4xf32>"
    assert_verifies(p)


# -- dtypes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, mlir",
    [
        (jnp.bfloat16, "bf16"),
        (jnp.float32, "f32"),
        (jnp.int32, "i32"),
        (jnp.float16, "f16"),
        (jnp.int8, "i8"),
        (jnp.int16, "i16"),
        (jnp.uint8, "ui8"),
        (jnp.uint32, "ui32"),
        (jnp.bool_, "i1"),
        (jnp.complex64, "complex<f32>"),
        (jnp.float8_e4m3fn, "f8E4M3FN"),
        (jnp.float8_e8m0fnu, "f8E8M0FNU"),
    ],
)
def test_dtypes(dtype, mlir):
    with pw.program("dtypes") as p:
        x = p.input(S((4, 2), dtype))
        with pw.mesh("m", devices=2):
            y = jax.jit(lambda a: a, in_shardings=P("x"), out_shardings=P("x"))(x)
        p.outputs(y)
    assert f"%arg0: !pw.array<4x2x{mlir}>" in p.text()
    assert f"function_type = (tensor<4x2x{mlir}>) -> tensor<4x2x{mlir}>" in p.text()
    assert_verifies(p)


def test_mixed_dtypes_in_one_call():
    def embed(tokens, table):
        return jnp.take(table, tokens, axis=0).astype(jnp.bfloat16)

    with pw.program("mixed") as p:
        tokens = p.input(S((8,), jnp.int32))
        table = p.input(S((16, 4), jnp.float32))
        p.outputs(jax.jit(embed)(tokens, table))
    assert calls(p)[0].endswith("(!pw.array<8xi32>, !pw.array<16x4xf32>) -> !pw.array<8x4xbf16>")
    assert_verifies(p)


# -- text, save, lower -------------------------------------------------------------


def test_locations_name_the_python_lines():
    with pw.program("located") as p:
        x = p.input(S((4,), F32))  # input line
        with pw.mesh("m", devices=1):  # mesh line
            y = jax.jit(double)(x)  # call line
        p.outputs(y)  # outputs line
    here = os.path.abspath(__file__)
    source = open(here).read().splitlines()
    text = p.text(locations=True)

    def loc(marker):
        line = next(i + 1 for i, s in enumerate(source) if s.endswith(f"# {marker}"))
        return f'loc("{here}":{line}:'

    assert re.search(re.escape('pw.mesh @m ["x"=1] ' + loc("mesh line")), text)
    assert re.search(r"%arg0: !pw.array<4xf32> " + re.escape(loc("input line")), text)
    assert re.search(r"-> !pw.array<4xf32, @m> " + re.escape(loc("call line")), text)
    assert re.search(r"return %0 : !pw.array<4xf32, @m> " + re.escape(loc("outputs line")), text)
    assert "loc(" not in p.text()
    assert_verifies(p)


def test_save_writes_a_file_pw_opt_accepts(tmp_path):
    with pw.program("saved") as p:
        x = p.input(S((8, 16), F32))
        w = p.input(S((16, 4), F32))
        with pw.mesh("m", devices=2):
            y = jax.jit(layer, in_shardings=(P("x"), P()), out_shardings=P("x"))(x, w)
        p.outputs(y)
    path = tmp_path / "saved.mlir"
    p.save(path)
    assert path.read_text() == p.text()
    proc = pw_opt(path.read_text())
    assert proc.returncode == 0, proc.stderr
    lowered = subprocess.run(
        [find_tool("pw-opt"), "--pw-lower", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert 'pw.mesh @m ["x"=2] {devices = array<i64: 0, 1>}' in lowered


def test_lower_returns_the_physical_program():
    with pw.program("lowered") as p:
        x = p.input(S((8, 16), F32))
        with pw.mesh("a", devices=2):
            h = jax.jit(double, in_shardings=P("x"), out_shardings=P("x"))(x)
        with pw.mesh("b", devices=2):
            y = jax.jit(double, in_shardings=P(None, "x"), out_shardings=P())(h)
        p.outputs(y)
    lowered = p.lower(devices=4)
    assert 'pw.mesh @a ["x"=2] {devices = array<i64: 0, 1>}' in lowered
    assert 'pw.mesh @b ["x"=2] {devices = array<i64: 2, 3>}' in lowered
    assert "pw.assemble" in lowered and 'pw.schedule = "critical-path"' in lowered


def test_lower_with_a_topology_file(tmp_path):
    path = tmp_path / "two islands.toml"  # a space: pass options are words
    path.write_text(
        '[[island]]\nname = "a"\nkind = "cpu"\ndevices = [0, 1]\n\n'
        '[[island]]\nname = "b"\nkind = "cpu"\ndevices = [2, 3]\n'
    )
    with pw.program("islands") as p:
        x = p.input(S((8, 16), F32))
        with pw.mesh("first", devices=2):
            h = jax.jit(double)(x)
        with pw.mesh("second", devices=2):
            y = jax.jit(double)(h)
        p.outputs(y)
    lowered = p.lower(topology=path)
    assert "cross_island" in lowered or "intra_island" in lowered
    assert re.search(r'pw.mesh @first \["x"=2\] \{devices = array<i64: [0-3], [0-3]>\}', lowered)


# -- the examples --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pipeline", "rl_step", "partially_placed"])
def test_examples_are_what_the_generator_captures(examples, name):
    block, make_inputs = examples.EXAMPLES[name]
    p = examples.capture(name, block, make_inputs(np.random.default_rng(20261130)))
    with open(os.path.join(REPO, "examples", f"{name}.mlir")) as f:
        assert p.text() == f.read(), "examples/generate.py no longer reproduces the example"
    assert_verifies(p)
    assert "pw.schedule" in p.lower()
