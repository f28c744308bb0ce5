"""Capture a block of ``jax.jit`` calls as one pw program.

Inside ``with pw.program(...) as p:`` every call of a jitted function on a
traced value is recorded, not run: it becomes a ``pw.call`` node whose
computation is the StableHLO that ``jax.jit`` lowers for that call's
signature (lowered once per distinct signature), and whose operands are the
values of earlier calls or program inputs. ``with pw.mesh(...)`` says where
calls run; calls outside any mesh stay unplaced for the passes to decide.

The capture uses JAX's own extension point: the program's values are JAX
tracers of a trace that accepts exactly one primitive, ``jit``, when user
code calls it directly. Everything else on a traced value (a ``jnp`` op
outside a jitted function, Python control flow, numpy conversion) raises a
``TracingError`` naming the user's line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import sys
import threading
from typing import Any, Sequence

import jax
import numpy as np
from jax._src import config as _config
from jax._src import core
from jax._src import pjit as _pjit
from jax._src.lib.mlir import ir as _ir
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from .errors import ProgramError, TracingError, is_internal, where

__all__ = ["Program", "program", "mesh", "unplaced", "Value"]

_state = threading.local()

# Modules of JAX whose functions are themselves jitted: a call of one of
# them on a traced value is a library op, not a user computation.
_LIBRARY_DIRS = tuple(
    os.sep + os.path.join("jax", *parts) + os.sep
    for parts in [
        ("_src", "numpy"),
        ("_src", "lax"),
        ("_src", "nn"),
        ("_src", "ops"),
        ("_src", "random"),
        ("_src", "scipy"),
        ("numpy",),
        ("nn",),
    ]
)

_DTYPES = {
    np.dtype("bool"): "i1",
    np.dtype("int8"): "i8",
    np.dtype("int16"): "i16",
    np.dtype("int32"): "i32",
    np.dtype("int64"): "i64",
    np.dtype("uint8"): "ui8",
    np.dtype("uint16"): "ui16",
    np.dtype("uint32"): "ui32",
    np.dtype("uint64"): "ui64",
    np.dtype("float16"): "f16",
    np.dtype(jax.numpy.bfloat16): "bf16",
    np.dtype("float32"): "f32",
    np.dtype("float64"): "f64",
}


def _mlir_dtype(dtype) -> str:
    try:
        return _DTYPES[np.dtype(dtype)]
    except KeyError:
        raise ProgramError(f"{where()}: pw arrays cannot hold {dtype}") from None


def _array_type(shape, dtype, mesh: str | None = None, sharding=None) -> str:
    dims = "".join(f"{d}x" for d in shape)
    text = f"{dims}{_mlir_dtype(dtype)}"
    if mesh is not None:
        text += f", @{mesh}"
        if sharding is not None:
            text += ", " + _sharding_text(sharding)
    return f"!pw.array<{text}>"


def _sharding_text(dims: Sequence[Sequence[str]]) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in dims) + "]"


def _spec_dims(spec: PartitionSpec, rank: int) -> list[list[str]]:
    """A PartitionSpec as per-dimension axis lists (missing dims replicated)."""
    dims: list[list[str]] = []
    for entry in tuple(spec) + (None,) * (rank - len(spec)):
        if entry is None:
            dims.append([])
        elif isinstance(entry, str):
            dims.append([entry])
        else:
            dims.append(list(entry))
    return dims


@dataclasses.dataclass(frozen=True)
class MeshSpec:
    """A virtual mesh: named axes with sizes, and placement constraints."""

    name: str | None
    axes: tuple[str, ...]
    shape: tuple[int, ...]
    kind: str | None = None
    same_island_as: str | None = None

    @property
    def abstract(self) -> AbstractMesh:
        return AbstractMesh(self.shape, self.axes)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def declaration(self) -> str:
        axes = ", ".join(f'"{a}"={s}' for a, s in zip(self.axes, self.shape))
        attrs = []
        if self.kind is not None:
            attrs.append(f'kind = "{self.kind}"')
        if self.same_island_as is not None:
            attrs.append(f"same_island_as = @{self.same_island_as}")
        suffix = " {" + ", ".join(attrs) + "}" if attrs else ""
        return f"pw.mesh @{self.name} [{axes}]{suffix}"


def _mesh_spec(name, devices, axes, shape, kind, same_island_as) -> MeshSpec:
    axes = (axes,) if isinstance(axes, str) else tuple(axes)
    if shape is None:
        if devices is None:
            raise ProgramError(f"{where()}: give a mesh devices=N or shape=(...)")
        if len(axes) != 1:
            raise ProgramError(f"{where()}: devices=N needs exactly one axis; use shape=(...) for {axes}")
        shape = (devices,)
    shape = tuple(int(s) for s in shape)
    if len(shape) != len(axes):
        raise ProgramError(f"{where()}: mesh shape {shape} does not match axes {axes}")
    if devices is not None and int(np.prod(shape)) != devices:
        raise ProgramError(f"{where()}: mesh shape {shape} has {int(np.prod(shape))} devices, not {devices}")
    if any(s < 1 for s in shape) or len(set(axes)) != len(axes):
        raise ProgramError(f"{where()}: mesh axes must be distinct with sizes >= 1, got {dict(zip(axes, shape))}")
    if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        raise ProgramError(f"{where()}: {name!r} is not a valid mesh name")
    return MeshSpec(name, axes, shape, kind, same_island_as)


@contextlib.contextmanager
def mesh(name: str, devices: int | None = None, axes=("x",), shape=None, *, kind=None, same_island_as=None):
    """Runs the calls of the block on the virtual mesh ``name``.

    ``devices=N`` gives a one-axis mesh; ``shape=(2, 4), axes=("x", "y")`` a
    bigger one. ``kind`` requests a device kind, ``same_island_as`` another
    mesh's island. PartitionSpecs in the block refer to these axes.
    """
    spec = _mesh_spec(name, devices, axes, shape, kind, same_island_as)
    program = _current_program()
    program._declare(spec)
    with _placement(spec):
        yield spec


@contextlib.contextmanager
def unplaced(devices: int | None = None, axes=("x",), shape=None):
    """Lowers the calls of the block for a mesh of this shape, but leaves
    them unplaced: the passes pick one of the program's meshes."""
    spec = _mesh_spec(None, devices, axes, shape, None, None)
    _current_program()
    with _placement(spec):
        yield spec


@contextlib.contextmanager
def _placement(spec: MeshSpec):
    """Makes `spec` the mesh of the calls in the block and the context mesh
    that bare PartitionSpecs in jax.jit resolve against.

    jax.jit resolves PartitionSpecs against a concrete mesh only, and
    jax.set_mesh refuses to run while a trace is active; so the context is
    set directly, with a placeholder mesh of the right shape whose devices
    are never used: every call is lowered against the abstract mesh.
    """
    previous = getattr(_state, "placement", None)
    _state.placement = spec
    placeholder = Mesh(np.array([jax.devices()[0]] * spec.size, dtype=object).reshape(spec.shape), spec.axes)
    prev_abstract = _config.abstract_mesh_context_manager.swap_local(placeholder.abstract_mesh)
    prev_concrete = _config.device_context.swap_local(placeholder)
    try:
        yield
    finally:
        _config.device_context.set_local(prev_concrete)
        _config.abstract_mesh_context_manager.set_local(prev_abstract)
        _state.placement = previous


def _current_program() -> "Program":
    program = getattr(_state, "program", None)
    if program is None:
        raise ProgramError(f"{where()}: pw.mesh and pw.unplaced belong inside `with pw.program(...)`")
    return program


class Value(core.Tracer):
    """A logical array of a program being captured: a program input or a
    result of a recorded call. It has a shape and dtype but no data."""

    __slots__ = ["node"]

    def __init__(self, trace, aval, node):
        super().__init__(trace, aval)
        self.node = node

    def __repr__(self):
        return f"pw.Value<{self.aval.str_short()}, {self.node[0]}>"

    def _control_flow(self, what):
        raise TracingError(
            f"{where()}: a traced value was used in Python control flow ({what}); "
            "a pw program is a dataflow graph of jitted calls, so decide inside a "
            "jitted function (jax.lax.cond, jnp.where) instead"
        )

    def __bool__(self):
        self._control_flow("bool()")

    def __index__(self):
        self._control_flow("as an index")

    def __int__(self):
        self._control_flow("int()")

    def __float__(self):
        self._control_flow("float()")

    def __complex__(self):
        self._control_flow("complex()")

    def __iter__(self):
        self._control_flow("iteration")

    def __array__(self, *args, **kwargs):
        raise TracingError(
            f"{where()}: a traced value was turned into a numpy array; only jax.jit "
            "functions can be called on the values of a pw program"
        )


class _Trace(core.Trace):
    """Accepts direct calls of jitted functions; refuses everything else."""

    def __init__(self, program: "Program"):
        super().__init__()
        self.program = program

    def process_primitive(self, primitive, tracers, params):
        ours = [t for t in tracers if isinstance(t, Value) and t._trace is self]
        if not ours:
            # Constants built inside the block (jnp.ones, ...) run normally.
            return primitive.bind(*tracers, **params)
        if primitive is not _pjit.jit_p or _from_library():
            name = params.get("name", primitive.name) if primitive is _pjit.jit_p else primitive.name
            raise TracingError(
                f"{where()}: '{name}' was applied to a traced value outside a jitted "
                "function; in a pw program only jax.jit functions may be called on "
                "traced values (wrap the computation in jax.jit)"
            )
        for i, t in enumerate(tracers):
            if not (isinstance(t, Value) and t._trace is self):
                raise TracingError(
                    f"{where()}: argument #{i} of {params['name']} is a constant "
                    f"({type(t).__name__}), not a value of the program; pass arrays as "
                    "program inputs, or make the argument static (static_argnums)"
                )
        return self.program._record_call(params, tracers)

    def process_call(self, primitive, f, tracers, params):
        raise TracingError(f"{where()}: '{primitive.name}' cannot be captured; use jax.jit")

    def process_custom_jvp_call(self, primitive, fun, jvp, tracers, *, symbolic_zeros):
        raise TracingError(f"{where()}: custom_jvp functions must be called inside a jitted function")

    def process_custom_vjp_call(self, primitive, fun, fwd, bwd, tracers, *, out_trees, symbolic_zeros):
        raise TracingError(f"{where()}: custom_vjp functions must be called inside a jitted function")

    def process_map(self, primitive, f, tracers, params):
        raise TracingError(f"{where()}: '{primitive.name}' cannot be captured; use jax.jit")


def _from_library() -> bool:
    """Whether the jit being bound was called by a JAX library function (a
    jnp op) rather than by the user's code."""
    frame = sys._getframe(2)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not is_internal(path):
            return False
        if any(d in path for d in _LIBRARY_DIRS):
            return True
        frame = frame.f_back
    return False


@dataclasses.dataclass
class _Computation:
    name: str
    text: str
    num_partitions: int


@dataclasses.dataclass
class _Call:
    computation: _Computation
    args: list[Value]
    mesh: str | None
    results: list[Value]
    where: str


class Program:
    """A pw program being captured (inside ``with``) or captured (after)."""

    def __init__(self, name: str = "program", platform: str = "cpu"):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
            raise ProgramError(f"{where()}: {name!r} is not a valid program name")
        self.name = name
        self.platform = platform
        self._trace: _Trace | None = None
        self._ctx = None
        self._closed = False
        self._meshes: dict[str, MeshSpec] = {}
        self._inputs: list[tuple[Value, str]] = []
        self._calls: list[_Call] = []
        self._computations: dict[str, _Computation] = {}
        self._lowered: dict[Any, tuple[_Computation, Any]] = {}
        self._outputs: list[Value] | None = None
        self._out_tree = None

    # -- capture -------------------------------------------------------------

    def __enter__(self) -> "Program":
        if self._closed or self._trace is not None:
            raise ProgramError(f"{where()}: a pw.program block can be entered only once")
        if getattr(_state, "program", None) is not None:
            raise ProgramError(f"{where()}: pw.program blocks cannot be nested")
        self._trace = _Trace(self)
        self._ctx = core.set_current_trace(self._trace)
        self._ctx.__enter__()
        _state.program = self
        return self

    def __exit__(self, exc_type, exc, tb):
        _state.program = None
        self._ctx.__exit__(exc_type, exc, tb)
        self._closed = True
        if exc_type is None and self._outputs is None:
            raise ProgramError(f"{where()}: the program declared no outputs; call p.outputs(...)")
        return False

    def _require_open(self, what):
        if self._trace is None or self._closed:
            raise ProgramError(f"{where()}: {what} belongs inside the `with pw.program(...)` block")

    def input(self, spec, *, mesh: str | None = None, sharding: PartitionSpec | None = None) -> Value:
        """Declares one program input: anything with .shape and .dtype
        (a jax.ShapeDtypeStruct, a numpy or jax array). ``mesh`` and
        ``sharding`` place it; otherwise the passes do."""
        self._require_open("p.input")
        shape = tuple(int(d) for d in spec.shape)
        dtype = np.dtype(spec.dtype)
        _mlir_dtype(dtype)
        if sharding is not None and mesh is None:
            raise ProgramError(f"{where()}: an input sharding needs a mesh")
        if mesh is not None and mesh not in self._meshes:
            raise ProgramError(f"{where()}: unknown mesh {mesh!r}; declare it with pw.mesh first")
        dims = None
        if sharding is not None:
            dims = _spec_dims(sharding, len(shape))
            self._check_sharding(dims, shape, self._meshes[mesh])
        index = len(self._inputs)
        value = Value(self._trace, core.ShapedArray(shape, dtype), ("input", index))
        self._inputs.append((value, _array_type(shape, dtype, mesh, dims)))
        return value

    def inputs(self, tree):
        """Declares a pytree of inputs; returns the same tree of values."""
        return jax.tree.map(lambda s: self.input(s), tree)

    def outputs(self, tree) -> None:
        """Declares the program's results: a pytree of values."""
        self._require_open("p.outputs")
        leaves, treedef = jax.tree.flatten(tree)
        for leaf in leaves:
            if not (isinstance(leaf, Value) and leaf._trace is self._trace):
                raise ProgramError(f"{where()}: outputs must be values of this program, got {type(leaf).__name__}")
        self._outputs = leaves
        self._out_tree = treedef

    def _declare(self, spec: MeshSpec):
        self._require_open("pw.mesh")
        known = self._meshes.get(spec.name)
        if known is not None and known != spec:
            raise ProgramError(f"{where()}: mesh {spec.name!r} was declared before as {known}, now {spec}")
        if spec.same_island_as is not None and spec.same_island_as not in self._meshes:
            raise ProgramError(f"{where()}: mesh {spec.name!r} refers to undeclared mesh {spec.same_island_as!r}")
        self._meshes[spec.name] = spec

    def _check_sharding(self, dims, shape, spec: MeshSpec):
        sizes = dict(zip(spec.axes, spec.shape))
        for d, axes in enumerate(dims):
            parts = 1
            for a in axes:
                if a not in sizes:
                    raise ProgramError(f"{where()}: axis {a!r} is not an axis of mesh {spec.name!r} {sizes}")
                parts *= sizes[a]
            if shape[d] % parts:
                raise ProgramError(f"{where()}: dimension {d} of size {shape[d]} does not divide by {parts} ({axes})")

    def _record_call(self, params, args):
        placement: MeshSpec | None = getattr(_state, "placement", None)
        closed = params["jaxpr"]
        key = (id(closed), repr(params["in_shardings"]), repr(params["out_shardings"]), placement)
        hit = self._lowered.get(key)
        if hit is None:
            computation = self._lower(params, placement)
            # Holding the jaxpr keeps its id from being reused.
            self._lowered[key] = (computation, closed)
        else:
            computation = hit[0]
        index = len(self._calls)
        results = [Value(self._trace, aval, ("call", index, i)) for i, aval in enumerate(closed.out_avals)]
        mesh_name = placement.name if placement is not None else None
        self._calls.append(_Call(computation, list(args), mesh_name, results, where()))
        return results

    def _lower(self, params, placement: MeshSpec | None) -> _Computation:
        closed = params["jaxpr"]
        fun = core.jaxpr_as_fun(closed)
        avals = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in closed.in_avals]
        abstract = placement.abstract if placement is not None else None
        ins = tuple(self._resolve(s, abstract, params["name"]) for s in params["in_shardings"])
        outs = tuple(self._resolve(s, abstract, params["name"]) for s in params["out_shardings"])
        donate = tuple(i for i, d in enumerate(params["donated_invars"]) if d)
        jitted = jax.jit(
            lambda *a: tuple(fun(*a)),
            in_shardings=ins,
            out_shardings=outs,
            donate_argnums=donate,
            keep_unused=True,
        )
        scope = jax.sharding.use_abstract_mesh(abstract) if abstract is not None else contextlib.nullcontext()
        try:
            with scope:
                lowered = jitted.trace(*avals).lower(lowering_platforms=(self.platform,))
        except Exception as e:  # JAX's own message says what is wrong
            raise TracingError(f"{where()}: lowering {params['name']} failed: {e}") from e
        module = lowered.compiler_ir("stablehlo")
        base = "jit_" + re.sub(r"[^A-Za-z0-9_]", "_", params["name"])
        with module.context:
            module.operation.attributes["sym_name"] = _ir.StringAttr.get(base)
            text = module.operation.get_asm(print_generic_op_form=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        for c in self._computations.values():
            if hashlib.sha256(c.text.encode()).hexdigest() == digest:
                return c
        name, k = base, 0
        while name in self._computations:
            k += 1
            name = f"{base}_{k}"
        if name != base:
            text = text.replace(f'sym_name = "{base}"', f'sym_name = "{name}"', 1)
        partitions = abstract.size if abstract is not None else _num_partitions(ins + outs)
        computation = _Computation(name, text, partitions)
        self._computations[name] = computation
        return computation

    def _resolve(self, sharding, abstract: AbstractMesh | None, fname: str):
        """A call's sharding on the mesh it runs on: unspecified means
        replicated there; a sharding on another mesh of the same axes is
        re-expressed on this one."""
        if abstract is None:
            return sharding
        if isinstance(sharding, NamedSharding):
            m = sharding.mesh
            if tuple(m.axis_names) != tuple(abstract.axis_names) or tuple(m.axis_sizes) != tuple(abstract.axis_sizes):
                raise TracingError(
                    f"{where()}: {fname} is sharded over mesh "
                    f"{dict(zip(m.axis_names, m.axis_sizes))} but runs on a pw mesh "
                    f"{dict(zip(abstract.axis_names, abstract.axis_sizes))}"
                )
            return NamedSharding(abstract, sharding.spec)
        if isinstance(sharding, PartitionSpec):
            return NamedSharding(abstract, sharding)
        return NamedSharding(abstract, PartitionSpec())

    # -- results ---------------------------------------------------------------

    def text(self) -> str:
        """The program as pw MLIR text."""
        if not self._closed:
            raise ProgramError(f"{where()}: the program is complete only after its `with` block")
        names = {}
        lines = [f"module @{self.name} {{"]
        for spec in self._meshes.values():
            lines.append("  " + spec.declaration())
        for c in self._computations.values():
            lines.extend("  " + line if line else line for line in c.text.rstrip().splitlines())
        arg_types = []
        for i, (value, type_text) in enumerate(self._inputs):
            names[id(value)] = f"%arg{i}"
            arg_types.append(type_text)
        body = []
        types = {id(v): t for v, t in self._inputs}
        for n, call in enumerate(self._calls):
            result_types = [_array_type(r.aval.shape, r.aval.dtype, call.mesh) for r in call.results]
            for i, r in enumerate(call.results):
                names[id(r)] = f"%{n}" if len(call.results) == 1 else f"%{n}#{i}"
                types[id(r)] = result_types[i]
            lhs = f"%{n} = " if len(call.results) == 1 else (f"%{n}:{len(call.results)} = " if call.results else "")
            operands = ", ".join(names[id(a)] for a in call.args)
            operand_types = ", ".join(types[id(a)] for a in call.args)
            on = f" on @{call.mesh}" if call.mesh else ""
            rt = result_types[0] if len(result_types) == 1 else "(" + ", ".join(result_types) + ")"
            body.append(f"    {lhs}pw.call @{call.computation.name}({operands}){on} : ({operand_types}) -> {rt}")
        outputs = self._outputs or []
        out_types = [types[id(v)] for v in outputs]
        signature = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
        results = out_types[0] if len(out_types) == 1 else "(" + ", ".join(out_types) + ")"
        lines.append(f"  func.func @main({signature}) -> {results} {{")
        lines.extend(body)
        lines.append(f"    return {', '.join(names[id(v)] for v in outputs)} : {', '.join(out_types)}")
        lines.append("  }")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def save(self, path) -> None:
        """Writes the program's MLIR text to ``path``."""
        text = self.text()
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)

    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    def unflatten_outputs(self, leaves):
        """Rebuilds the output pytree from a flat list of arrays."""
        return jax.tree.unflatten(self._out_tree, list(leaves))

    def lower(self, **options) -> str:
        """The program lowered to physical devices (``pw-opt --pw-lower``)."""
        from .tools import lower

        return lower(self.text(), **options)

    def run(self, *arrays, **options):
        """Runs the program through pw-run on the given input arrays (flat,
        in declaration order); returns the outputs as numpy arrays in the
        pytree given to ``p.outputs``."""
        from .tools import run

        if len(arrays) != len(self._inputs):
            raise ProgramError(f"{where()}: the program takes {len(self._inputs)} inputs, got {len(arrays)}")
        for i, (a, (value, _)) in enumerate(zip(arrays, self._inputs)):
            if tuple(np.shape(a)) != tuple(value.aval.shape) or np.asarray(a).dtype != value.aval.dtype:
                raise ProgramError(
                    f"{where()}: input #{i} is {np.asarray(a).dtype}{list(np.shape(a))}, the program "
                    f"expects {value.aval.dtype}{list(value.aval.shape)}"
                )
        return self.unflatten_outputs(run(self.text(), [np.asarray(a) for a in arrays], **options))


def _num_partitions(shardings) -> int:
    for s in shardings:
        if isinstance(s, NamedSharding):
            return int(np.prod(s.mesh.axis_sizes, dtype=np.int64))
    return 1


def program(name: str = "program", platform: str = "cpu") -> Program:
    """Starts capturing a program: ``with pw.program("name") as p: ...``."""
    return Program(name, platform)
