"""pw/_jax_compat.py against the installed JAX: one test per symbol, each
checking what pw relies on (a class it subclasses, an attribute it reads,
the kind of object a function returns, the text of an error), so that a
JAX upgrade that moves or changes one fails here first, naming it."""

import ast
import dataclasses
import inspect
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AbstractMesh, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pw import _jax_compat as compat

ORIGIN = compat.TracerOrigin(func_src_info="the test's block", traced_for="test_jax_compat")
F32 = jax.ShapeDtypeStruct((2, 3), jnp.float32)


class Recorder(compat.Trace):
    """A trace like pw's, reduced: records each bind of jit_p (and the
    source files on the stack then) and answers it with tracers of the
    results; runs calls on constants as usual."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.stacks = []

    def process_primitive(self, primitive, tracers, params):
        if primitive is not compat.jit_p:
            return primitive.bind(*tracers, **params)
        call = compat.jit_call(params)
        self.calls.append(call)
        frame, files = sys._getframe(), []
        while frame is not None:
            files.append(os.path.abspath(frame.f_code.co_filename))
            frame = frame.f_back
        self.stacks.append(files)
        return [compat.Tracer(self, aval, ORIGIN) for aval in call.out_avals]

    def process_custom_jvp_call(self, primitive, fun, jvp, tracers, *args, **kwargs):
        return compat.eval_trace.process_custom_jvp_call(primitive, fun, jvp, tracers, *args, **kwargs)


def record(f, *specs):
    """The trace of `f` called on tracers of `specs` (capture-style), and
    what `f` returned."""
    trace = Recorder()
    with compat.set_current_trace(trace):
        args = [compat.Tracer(trace, compat.ShapedArray(s.shape, s.dtype), ORIGIN) for s in specs]
        out = f(*args)
    return trace, out


def double(x):
    return x * 2


def lowered_module(f, *specs):
    return jax.jit(f).trace(*specs).lower(lowering_platforms=("cpu",)).compiler_ir("stablehlo")


def first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0]


def test_every_symbol_has_a_test():
    """__all__ is what the module defines, and each name has its test."""
    tree = ast.parse(inspect.getsource(compat))
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    public = {n for n in defined if not n.startswith("_")}
    assert public == set(compat.__all__)
    tests = {n for n in globals() if n.startswith("test_")}
    assert {f"test_{n}" for n in compat.__all__} <= tests


def test_Trace():
    assert inspect.isclass(compat.Trace)
    trace = Recorder()  # __init__() takes no arguments
    assert trace.is_valid()
    trace.invalidate()
    assert not trace.is_valid()
    # The hooks pw overrides, with the leading arguments pw's overrides take.
    hooks = {
        "process_primitive": ["primitive", "tracers", "params"],
        "process_call": ["call_primitive", "f", "tracers", "params"],
        "process_custom_jvp_call": ["primitive", "fun", "jvp", "tracers"],
        "process_custom_vjp_call": ["primitive", "fun", "fwd", "bwd", "tracers"],
    }
    for name, leading in hooks.items():
        params = list(inspect.signature(getattr(compat.Trace, name)).parameters)[1:]
        assert params[: len(leading)] == leading, f"Trace.{name}{params}"


def test_eval_trace():
    for name in ("process_call", "process_custom_jvp_call", "process_custom_vjp_call"):
        assert callable(getattr(compat.eval_trace, name)), name
    # A custom_jvp function on a constant, handed to eval_trace, runs.
    trace, out = record(lambda: jax.nn.relu(np.float32(-1.0)))
    assert float(out) == 0.0 and trace.calls == []


def test_set_current_trace():
    trace, out = record(jax.jit(double), F32)
    assert len(trace.calls) == 1 and isinstance(out, compat.Tracer) and out.trace is trace


def test_ShapedArray():
    aval = compat.ShapedArray((2, 3), np.dtype("float32"))
    assert aval.shape == (2, 3) and aval.dtype == np.float32
    assert aval.str_short() == "float32[2,3]"


def test_jaxpr_as_fun():
    trace, _ = record(jax.jit(double), F32)
    (result,) = compat.jaxpr_as_fun(trace.calls[0].jaxpr)(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(result), np.full((2, 3), 2, np.float32))


def test_TracerOrigin():
    origin = compat.TracerOrigin(func_src_info="here", traced_for="there")
    assert (origin.func_src_info, origin.traced_for) == ("here", "there")


def test_Tracer():
    trace = Recorder()
    tracer = compat.Tracer(trace, compat.ShapedArray((2,), np.dtype("float32")), ORIGIN)
    assert isinstance(tracer, jax.core.Tracer)
    assert tracer.trace is trace and tracer.origin is ORIGIN and tracer.shape == (2,)
    # A tracer used after its trace ended: JAX's error names its origin.
    trace.invalidate()
    with pytest.raises(jax.errors.UnexpectedTracerError) as e:
        jnp.sin(tracer)
    assert f"{ORIGIN.func_src_info} traced for {ORIGIN.traced_for}" in str(e.value)


def test_jit_p():
    assert compat.jit_p.name == "jit"
    # A jax.jit call on a tracer binds it (else Recorder would not record).
    trace, _ = record(jax.jit(double), F32)
    assert len(trace.calls) == 1


def test_JitCall():
    assert [f.name for f in dataclasses.fields(compat.JitCall)] == [
        "name",
        "jaxpr",
        "in_avals",
        "out_avals",
        "in_shardings",
        "out_shardings",
        "donated_invars",
        "source_file",
    ]


def test_jit_call():
    trace, _ = record(jax.jit(lambda x, y: (x + y, x), donate_argnums=(1,)), F32, F32)
    (call,) = trace.calls
    assert call.name == "<lambda>"
    assert [(a.shape, a.dtype) for a in call.in_avals] == [((2, 3), np.float32)] * 2
    assert [(a.shape, a.dtype) for a in call.out_avals] == [((2, 3), np.float32)] * 2
    assert len(call.in_shardings) == 2 and len(call.out_shardings) == 2
    assert tuple(call.donated_invars) == (False, True)
    assert os.path.abspath(call.source_file) == os.path.abspath(__file__)


def test_UnspecifiedValue():
    trace, _ = record(jax.jit(double), F32)
    (call,) = trace.calls
    assert all(isinstance(s, compat.UnspecifiedValue) for s in call.in_shardings + call.out_shardings)


def test_context_mesh():
    mesh = Mesh(np.array([jax.devices()[0]] * 2, dtype=object), ("x",))
    before = jax.sharding.get_abstract_mesh()
    # While a trace is active, as in a pw.mesh block.
    trace = Recorder()
    with compat.set_current_trace(trace), compat.context_mesh(mesh):
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
        # A bare PartitionSpec resolves against it.
        traced = jax.jit(double, in_shardings=P("x")).trace(jax.ShapeDtypeStruct((4,), jnp.float32))
    assert traced is not None
    assert jax.sharding.get_abstract_mesh() == before


def test_IndivisibleError():
    assert issubclass(compat.IndivisibleError, Exception)
    mesh = AbstractMesh((2,), ("x",))
    jitted = jax.jit(double, in_shardings=NamedSharding(mesh, P("x")))
    with pytest.raises(compat.IndivisibleError), jax.sharding.use_abstract_mesh(mesh):
        jitted.trace(jax.ShapeDtypeStruct((3,), jnp.float32)).lower(lowering_platforms=("cpu",))


def test_NO_CONTEXT_MESH_MESSAGE():
    with pytest.raises(RuntimeError) as e:
        jax.jit(double, in_shardings=P("x")).trace(jax.ShapeDtypeStruct((4,), jnp.float32))
    assert compat.NO_CONTEXT_MESH_MESSAGE in first_line(e.value)


def test_MISSING_AXIS_MESSAGE():
    mesh = AbstractMesh((2,), ("x",))
    with pytest.raises(ValueError) as e, jax.sharding.use_abstract_mesh(mesh):
        jax.jit(double, in_shardings=NamedSharding(mesh, P("y"))).trace(jax.ShapeDtypeStruct((4,), jnp.float32))
    assert compat.MISSING_AXIS_MESSAGE in first_line(e.value)


def test_StringAttr():
    module = lowered_module(double, F32)
    with module.context:
        module.operation.attributes["sym_name"] = compat.StringAttr.get("renamed")
        text = module.operation.get_asm(print_generic_op_form=True)
    assert 'sym_name = "renamed"' in text


def _jax_path(entry: str) -> str:
    """The installed path of a LIBRARY_DIRS/TRANSFORM_DIR entry."""
    return os.path.dirname(os.path.dirname(os.path.abspath(jax.__file__))) + entry


def test_LIBRARY_DIRS():
    for entry in compat.LIBRARY_DIRS:
        path = _jax_path(entry)
        assert os.path.isdir(path) and any(f.endswith(".py") for f in os.listdir(path)), path
    # A jnp op binds jit from one of them.
    trace, _ = record(jnp.sum, F32)
    assert any(entry in f for f in trace.stacks[0] for entry in compat.LIBRARY_DIRS), trace.stacks[0]


def test_TRANSFORM_DIR():
    assert os.path.isdir(_jax_path(compat.TRANSFORM_DIR))
    # vmap binds the jit of the function it maps from there.
    trace, _ = record(jax.vmap(jax.jit(double)), F32)
    assert any(compat.TRANSFORM_DIR in f for f in trace.stacks[0]), trace.stacks[0]


def test_colocated_deserialize():
    """It reads back what colocated_python's own serializer writes, devices
    included (the sidecar's input)."""
    from jax.experimental.colocated_python import serialization

    device = jax.devices("cpu")[0]
    sharding = jax.sharding.SingleDeviceSharding(device)
    spec = jax.ShapeDtypeStruct((2,), jnp.float32, sharding=sharding)
    treedef = jax.tree_util.tree_structure(((spec,), {}))
    data = serialization._serialize((double, treedef, (spec,), None, None, jax.sharding.SingleDeviceSharding(device)))
    fun, tree, leaves, out_tree, out_leaves, where = compat.colocated_deserialize(data)
    assert fun(3) == 6 and tree == treedef and out_tree is None and out_leaves is None
    assert leaves[0].shape == (2,) and leaves[0].sharding.device_set == {device}
    assert where.device_set == {device}
