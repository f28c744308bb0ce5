"""Capture a block of ``jax.jit`` calls as one pw program.

Inside ``with pw.program(...) as p:`` every call of a jitted function on a
traced value is recorded, not run: it becomes a ``pw.call`` node whose
computation is the StableHLO that ``jax.jit`` lowers for that call's
signature (lowered once per distinct signature and mesh shape), and whose
operands are the values of earlier calls or program inputs. ``with
pw.mesh(...)`` says where calls run; calls outside any mesh stay unplaced
for the passes to decide.

The capture uses JAX's own extension point: the program's values are JAX
tracers of a trace that accepts exactly one primitive, ``jit``, when user
code calls it directly. Everything else on a traced value (a ``jnp`` op
outside a jitted function, Python control flow, numpy conversion, a JAX
transformation around the call) raises a ``TracingError`` naming the
user's line. See docs/frontend.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import sys
import threading
import types
from typing import Any

import jax
import numpy as np
from jax._src import config as _config
from jax._src import core
from jax._src import pjit as _pjit
from jax._src.lib.mlir import ir as _ir
from jax._src.sharding import IndivisibleError as _IndivisibleError
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from . import _run
from ._emit import array_type, is_symbol, mlir_dtype, module_text
from .errors import (
    ProgramError,
    PwError,
    TracingError,
    is_internal,
    position,
    user_frame,
    where,
    where_raised,
)
from .tools import check_schedule

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
# JAX's transformations (vmap, grad, ...) run their rules from here.
_TRANSFORM_DIR = os.sep + os.path.join("jax", "_src", "interpreters") + os.sep
_JAX_DIR = os.sep + "jax" + os.sep

# The name a computation's module carries while its text is compared.
_PLACEHOLDER = "__pw_computation__"


def _spec_dims(spec: PartitionSpec, rank: int) -> list[list[str]]:
    """A PartitionSpec as per-dimension axis lists (missing dims replicated)."""
    if len(spec) > rank:
        raise ProgramError(f"{where()}: {spec} has {len(spec)} entries for an array of rank {rank}")
    dims: list[list[str]] = []
    for entry in tuple(spec) + (None,) * (rank - len(spec)):
        if entry is None:
            dims.append([])
        elif isinstance(entry, str):
            dims.append([entry])
        elif isinstance(entry, (tuple, list)) and all(isinstance(a, str) for a in entry):
            dims.append(list(entry))
        else:
            raise ProgramError(f"{where()}: unsupported PartitionSpec entry {entry!r} in {spec}")
    return dims


def _here() -> tuple[str, int, int]:
    """(file, line, column) of the user's code."""
    return position(user_frame())


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

    def describe(self) -> str:
        sizes = dict(zip(self.axes, self.shape))
        return f"the pw.unplaced mesh {sizes}" if self.name is None else f"mesh {self.name!r} {sizes}"



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
    if not all(isinstance(a, str) and a for a in axes):
        raise ProgramError(f"{where()}: mesh axis names must be non-empty strings, got {axes}")
    if name is not None and not is_symbol(name):
        raise ProgramError(f"{where()}: {name!r} is not a valid mesh name")
    if same_island_as is not None and not is_symbol(same_island_as):
        raise ProgramError(f"{where()}: same_island_as={same_island_as!r} is not a mesh name")
    return MeshSpec(name, axes, shape, kind, same_island_as)


@contextlib.contextmanager
def mesh(name: str, devices: int | None = None, axes=("x",), shape=None, *, kind=None, same_island_as=None):
    """Runs the calls of the block on the virtual mesh ``name``.

    ``devices=N`` gives a one-axis mesh; ``shape=(2, 4), axes=("x", "y")`` a
    bigger one. ``kind`` requests a device kind, ``same_island_as`` another
    mesh's island. PartitionSpecs in the block refer to these axes.
    """
    program = _current_program()
    spec = _mesh_spec(name, devices, axes, shape, kind, same_island_as)
    program._declare(spec)
    with _placement(spec):
        yield spec


@contextlib.contextmanager
def unplaced(devices: int | None = None, axes=("x",), shape=None):
    """Lowers the calls of the block for a mesh of this shape, but leaves
    them unplaced: the passes pick one of the program's meshes that fits
    (same device count and axes), or declare a new one."""
    _current_program()
    spec = _mesh_spec(None, devices, axes, shape, None, None)
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
    except Exception as e:
        error = _sharding_error(e, spec)
        if error is None:
            raise
        raise error from e
    finally:
        _config.device_context.set_local(prev_concrete)
        _config.abstract_mesh_context_manager.set_local(prev_abstract)
        _state.placement = previous


def _sharding_error(e: BaseException, spec: MeshSpec | None) -> ProgramError | None:
    """The ProgramError for an exception JAX raised while resolving a
    jitted function's shardings against the block's mesh; None for any
    other exception."""
    if isinstance(e, PwError):
        return None
    message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if isinstance(e, RuntimeError) and "non-empty mesh in context" in message:
        return ProgramError(
            f"{where_raised(e.__traceback__)}: a jax.jit with PartitionSpec shardings was called "
            "outside any mesh; call it inside `with pw.mesh(...)` (placed) or `with "
            "pw.unplaced(devices=N)` (placed by the passes), whose axes the PartitionSpecs name"
        )
    if isinstance(e, _IndivisibleError):
        what = "does not divide the array"
    elif isinstance(e, ValueError) and "is not found in mesh" in message:
        what = "names an axis the mesh lacks"
    else:
        return None
    where_ = where_raised(e.__traceback__)
    on = spec.describe() if spec is not None else "its mesh"
    return ProgramError(f"{where_}: a sharding {what}, so {on} cannot satisfy it: {message}")


def _current_program() -> "Program":
    program = getattr(_state, "program", None)
    if program is None:
        raise ProgramError(f"{where()}: pw.mesh and pw.unplaced belong inside `with pw.program(...)`")
    return program


class Value(core.Tracer):
    """A logical array of a program being captured: a program input or a
    result of a recorded call. It has a shape and dtype but no data."""

    # `_debug_info` is what JAX's escaped-tracer error reports about the
    # trace a leaked tracer came from.
    __slots__ = ["node", "_debug_info"]

    def __init__(self, trace, aval, node):
        super().__init__(trace, aval)
        self.node = node
        self._debug_info = trace.program._origin

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

    def __hex__(self):
        self._control_flow("hex()")

    def __oct__(self):
        self._control_flow("oct()")

    def __iter__(self):
        self._control_flow("iteration")

    def item(self, *args):
        self._control_flow(".item()")

    def _no_data(self, what):
        raise TracingError(
            f"{where()}: a traced value was turned into {what}; a value of a pw program "
            "has no data while it is captured: only jax.jit functions can be called on it "
            "(p.run returns the outputs as numpy arrays)"
        )

    def __array__(self, *args, **kwargs):
        self._no_data("a numpy array")

    def tolist(self):
        self._no_data("a list")

    def tobytes(self, order="C"):
        self._no_data("bytes")

    def __dlpack__(self, *args, **kwargs):
        self._no_data("a DLPack capsule")


class _Trace(core.Trace):
    """Accepts direct calls of jitted functions; refuses everything else."""

    def __init__(self, program: "Program"):
        super().__init__()
        self.program = program

    def process_primitive(self, primitive, tracers, params):
        for t in tracers:
            if isinstance(t, Value) and t._trace is not self:
                raise TracingError(
                    f"{where()}: a value of another pw program ({t._debug_info.func_src_info}) "
                    "was used here; a program's values exist only inside its own block"
                )
        if not any(isinstance(t, Value) for t in tracers):
            # Constants built inside the block (jnp.ones, ...) run normally.
            return primitive.bind(*tracers, **params)
        if primitive is not _pjit.jit_p:
            raise TracingError(
                f"{where()}: '{primitive.name}' was applied to a traced value outside a jitted "
                "function; in a pw program only jax.jit functions may be called on "
                "traced values (wrap the computation in jax.jit)"
            )
        name = params["name"]
        caller = _caller_kind()
        if caller == "transform":
            raise TracingError(
                f"{where()}: {name} was called on a traced value under a JAX transformation "
                "(jax.vmap, jax.grad, ...); a pw program cannot capture a transformed "
                "call: transform inside the jitted function, e.g. jax.jit(jax.vmap(f))"
            )
        if caller == "library" or _defined_in_jax(params["jaxpr"]):
            raise TracingError(
                f"{where()}: '{name}' (a JAX library function) was applied to a traced value "
                "outside a jitted function; in a pw program only jax.jit functions of your "
                "own may be called on traced values (wrap the computation in jax.jit)"
            )
        for i, t in enumerate(tracers):
            if not isinstance(t, Value):
                raise TracingError(
                    f"{where()}: argument #{i} of {name} is a constant "
                    f"({type(t).__name__}), not a value of the program; pass arrays as "
                    "program inputs, or make the argument static (static_argnums)"
                )
        return self.program._record_call(params, tracers)

    # Calls of other kinds: refused on program values; on constants only,
    # JAX runs them as usual.

    def process_call(self, primitive, f, tracers, params):
        if not any(isinstance(t, Value) for t in tracers):
            return core.eval_trace.process_call(primitive, f, tracers, params)
        raise TracingError(f"{where()}: '{primitive.name}' cannot be captured; use jax.jit")

    def process_custom_jvp_call(self, primitive, fun, jvp, tracers, *args, **kwargs):
        if not any(isinstance(t, Value) for t in tracers):
            return core.eval_trace.process_custom_jvp_call(primitive, fun, jvp, tracers, *args, **kwargs)
        raise TracingError(
            f"{where()}: a custom_jvp function (jax.nn.relu is one) was applied to a traced "
            "value outside a jitted function; call it inside a jax.jit function"
        )

    def process_custom_vjp_call(self, primitive, fun, fwd, bwd, tracers, *args, **kwargs):
        if not any(isinstance(t, Value) for t in tracers):
            return core.eval_trace.process_custom_vjp_call(primitive, fun, fwd, bwd, tracers, *args, **kwargs)
        raise TracingError(
            f"{where()}: a custom_vjp function was applied to a traced value outside a "
            "jitted function; call it inside a jax.jit function"
        )


def _caller_kind() -> str | None:
    """Who bound the jit being recorded: "transform" when a JAX
    transformation (vmap, grad, ...) did, "library" when a JAX library
    function (a jnp op) did, None when the user's code called it."""
    frame = sys._getframe(2)
    kind = None
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not is_internal(path):
            return kind
        if _TRANSFORM_DIR in path:
            return "transform"
        if any(d in path for d in _LIBRARY_DIRS):
            kind = "library"
        frame = frame.f_back
    return kind


def _defined_in_jax(closed) -> bool:
    """Whether the jitted function's source lies inside JAX (jnp.tanh is a
    jax.jit function of JAX's own)."""
    info = getattr(closed.jaxpr, "debug_info", None)
    src = getattr(info, "func_src_info", None) or ""
    _, sep, place = src.rpartition(" at ")
    if not sep:
        return False
    path = place.rsplit(":", 1)[0]
    return _JAX_DIR in os.path.abspath(path) or "jaxlib" in path


@dataclasses.dataclass
class _Computation:
    name: str
    text: str


@dataclasses.dataclass
class _Call:
    computation: _Computation
    args: list[Value]
    mesh: str | None
    results: list[Value]
    pos: tuple[str, int, int]


class Program:
    """A pw program being captured (inside ``with``) or captured (after)."""

    def __init__(self, name: str = "program", platform: str = "cpu"):
        if not is_symbol(name):
            raise ProgramError(f"{where()}: {name!r} is not a valid program name")
        self.name = name
        self.platform = platform
        self._trace: _Trace | None = None
        self._ctx = None
        self._closed = False
        self._failed = False
        self._origin = None
        self._meshes: dict[str, MeshSpec] = {}
        self._mesh_pos: dict[str, tuple[str, int, int]] = {}
        self._inputs: list[tuple[Value, str, tuple[str, int, int]]] = []
        self._calls: list[_Call] = []
        self._computations: dict[str, _Computation] = {}
        self._by_content: dict[tuple[str, str], _Computation] = {}
        self._lowered: dict[Any, tuple[_Computation, Any]] = {}
        self._outputs: list[Value] | None = None
        self._outputs_pos = None
        self._out_tree = None
        # p.run's executables, per (text, schedule, devices, session).
        self._executables: dict = {}

    # -- capture -------------------------------------------------------------

    def __enter__(self) -> "Program":
        if self._closed or self._trace is not None:
            raise ProgramError(f"{where()}: a pw.program block can be entered only once")
        if getattr(_state, "program", None) is not None:
            raise ProgramError(f"{where()}: pw.program blocks cannot be nested")
        self._origin = types.SimpleNamespace(
            func_src_info=f"the `with pw.program({self.name!r})` block at {where()}",
            traced_for="pw.program (its values exist only inside the block; run the program with p.run)",
        )
        self._trace = _Trace(self)
        self._ctx = core.set_current_trace(self._trace)
        self._ctx.__enter__()
        _state.program = self
        return self

    def __exit__(self, exc_type, exc, tb):
        _state.program = None
        self._ctx.__exit__(exc_type, exc, tb)
        # Any later use of this program's values is an escaped tracer.
        self._trace.invalidate()
        self._closed = True
        if exc is not None:
            self._failed = True
            error = _sharding_error(exc, None) if isinstance(exc, Exception) else None
            if error is not None:
                raise error from exc
            return False
        if self._outputs is None:
            self._failed = True
            raise ProgramError(f"{where()}: the program declared no outputs; call p.outputs(...)")
        return False

    def _require_open(self, what):
        if self._trace is None or self._closed:
            raise ProgramError(f"{where()}: {what} belongs inside the `with pw.program(...)` block")

    def input(self, spec, *, mesh: str | None = None, sharding: PartitionSpec | None = None) -> Value:
        """Declares one program input: anything with .shape and .dtype
        (a jax.ShapeDtypeStruct, a numpy or jax array). ``mesh`` (a mesh
        declared before by ``pw.mesh``) and ``sharding`` (a PartitionSpec
        over that mesh's axes) place it; otherwise the passes do."""
        self._require_open("p.input")
        if not (hasattr(spec, "shape") and hasattr(spec, "dtype")):
            raise ProgramError(
                f"{where()}: a program input needs a shape and dtype (a jax.ShapeDtypeStruct "
                f"or an array), got {type(spec).__name__}"
            )
        shape = tuple(int(d) for d in spec.shape)
        mlir_dtype(spec.dtype)
        dtype = np.dtype(spec.dtype)
        if dtype.itemsize == 8 and dtype.kind in "iuf" and not jax.config.jax_enable_x64:
            raise ProgramError(
                f"{where()}: a {dtype} input needs jax_enable_x64 (without it jax.jit computes "
                f"in 32 bits); enable it or declare a 32-bit input"
            )
        if sharding is not None and mesh is None:
            raise ProgramError(f"{where()}: an input sharding needs a mesh")
        if mesh is not None and mesh not in self._meshes:
            raise ProgramError(f"{where()}: unknown mesh {mesh!r}; declare it with pw.mesh first")
        dims = None
        if sharding is not None:
            if not isinstance(sharding, PartitionSpec):
                raise ProgramError(f"{where()}: an input sharding is a PartitionSpec, got {type(sharding).__name__}")
            dims = _spec_dims(sharding, len(shape))
            self._check_sharding(dims, shape, self._meshes[mesh])
        index = len(self._inputs)
        value = Value(self._trace, core.ShapedArray(shape, dtype), ("input", index))
        self._inputs.append((value, array_type(shape, dtype, mesh, dims), _here()))
        return value

    def inputs(self, tree):
        """Declares a pytree of inputs (leaves as for ``input``); returns
        the same tree of values. Inputs are numbered in leaf order."""
        return jax.tree.map(lambda s: self.input(s), tree)

    def outputs(self, tree) -> None:
        """Declares the program's results: a pytree of values (once)."""
        self._require_open("p.outputs")
        if self._outputs is not None:
            raise ProgramError(f"{where()}: p.outputs was called before; declare all outputs in one call")
        leaves, treedef = jax.tree.flatten(tree)
        if not leaves:
            raise ProgramError(f"{where()}: a program needs at least one output")
        for leaf in leaves:
            if not (isinstance(leaf, Value) and leaf._trace is self._trace):
                raise ProgramError(f"{where()}: outputs must be values of this program, got {type(leaf).__name__}")
        self._outputs = leaves
        self._out_tree = treedef
        self._outputs_pos = _here()

    def _declare(self, spec: MeshSpec):
        self._require_open("pw.mesh")
        known = self._meshes.get(spec.name)
        if known is not None and known != spec:
            raise ProgramError(f"{where()}: mesh {spec.name!r} was declared before as {known}, now {spec}")
        if known is None and (spec.name in self._computations or spec.name == "main"):
            raise ProgramError(f"{where()}: mesh name {spec.name!r} is already the name of a computation")
        if spec.same_island_as is not None and spec.same_island_as not in self._meshes:
            raise ProgramError(f"{where()}: mesh {spec.name!r} refers to undeclared mesh {spec.same_island_as!r}")
        if known is None:
            self._meshes[spec.name] = spec
            self._mesh_pos[spec.name] = _here()

    def _check_sharding(self, dims, shape, spec: MeshSpec):
        sizes = dict(zip(spec.axes, spec.shape))
        used: set[str] = set()
        for d, axes in enumerate(dims):
            parts = 1
            for a in axes:
                if a not in sizes:
                    raise ProgramError(f"{where()}: axis {a!r} is not an axis of mesh {spec.name!r} {sizes}")
                if a in used:
                    raise ProgramError(f"{where()}: axis {a!r} is used twice in the sharding")
                used.add(a)
                parts *= sizes[a]
            if shape[d] % parts:
                raise ProgramError(f"{where()}: dimension {d} of size {shape[d]} does not divide by {parts} ({axes})")

    def _record_call(self, params, args):
        placement: MeshSpec | None = getattr(_state, "placement", None)
        closed = params["jaxpr"]
        for i, aval in enumerate(closed.out_avals):
            mlir_dtype(getattr(aval, "dtype", None), f" (result #{i} of {params['name']})")
        shape_key = (placement.axes, placement.shape) if placement is not None else None
        key = (id(closed), repr(params["in_shardings"]), repr(params["out_shardings"]), shape_key)
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
        self._calls.append(_Call(computation, list(args), mesh_name, results, _here()))
        return results

    def _lower(self, params, placement: MeshSpec | None) -> _Computation:
        closed = params["jaxpr"]
        fun = core.jaxpr_as_fun(closed)
        avals = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in closed.in_avals]
        abstract = placement.abstract if placement is not None else None
        ins = tuple(self._resolve(s, placement, params["name"]) for s in params["in_shardings"])
        outs = tuple(self._resolve(s, placement, params["name"]) for s in params["out_shardings"])
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
            error = _sharding_error(e, placement)
            if error is not None:
                raise error from e
            raise TracingError(f"{where()}: lowering {params['name']} failed: {e}") from e
        module = lowered.compiler_ir("stablehlo")
        base = "jit_" + re.sub(r"[^A-Za-z0-9_]", "_", params["name"])
        with module.context:
            module.operation.attributes["sym_name"] = _ir.StringAttr.get(_PLACEHOLDER)
            text = module.operation.get_asm(print_generic_op_form=True)
        # One computation per function name and module text: the same
        # function reached through another jaxpr (a fresh jax.jit object, a
        # redefinition in a loop, another mesh of the same shape) is shared.
        content = (base, hashlib.sha256(text.encode()).hexdigest())
        known = self._by_content.get(content)
        if known is not None:
            return known
        name, k = base, 0
        while name in self._computations or name in self._meshes:
            k += 1
            name = f"{base}_{k}"
        placeholder = f'sym_name = "{_PLACEHOLDER}"'
        if placeholder not in text:
            raise TracingError(f"{where()}: unexpected module text from JAX for {params['name']}")
        text = text.replace(placeholder, f'sym_name = "{name}"', 1)
        computation = _Computation(name, text)
        self._computations[name] = computation
        self._by_content[content] = computation
        return computation

    def _resolve(self, sharding, placement: MeshSpec | None, fname: str):
        """A call's sharding on the mesh it runs on: unspecified means
        replicated there; a sharding on another mesh of the same axes is
        re-expressed on this one."""
        if placement is None:
            return sharding
        abstract = placement.abstract
        if isinstance(sharding, NamedSharding):
            m = sharding.mesh
            if tuple(m.axis_names) != tuple(abstract.axis_names) or tuple(m.axis_sizes) != tuple(abstract.axis_sizes):
                raise ProgramError(
                    f"{where()}: {fname} is sharded over a mesh "
                    f"{dict(zip(m.axis_names, m.axis_sizes))} but runs on "
                    f"{placement.describe()}; shard it over the block's mesh (a bare PartitionSpec does that)"
                )
            return NamedSharding(abstract, sharding.spec)
        if isinstance(sharding, PartitionSpec):
            return NamedSharding(abstract, sharding)
        if sharding is None or type(sharding).__name__ == "UnspecifiedValue":
            return NamedSharding(abstract, PartitionSpec())
        raise ProgramError(
            f"{where()}: {fname} has a {type(sharding).__name__} sharding; inside a pw mesh "
            "give PartitionSpecs or NamedShardings"
        )

    # -- results ---------------------------------------------------------------

    def text(self, locations: bool = False) -> str:
        """The program as pw MLIR text. With ``locations``, its meshes,
        inputs, calls and outputs carry the Python source positions that
        declared them, so pw-opt and pw-run diagnostics name those lines."""
        if not self._closed:
            raise ProgramError(f"{where()}: the program is complete only after its `with` block")
        if self._failed:
            raise ProgramError(f"{where()}: the capture of program {self.name!r} failed; there is no program")

        return module_text(
            self.name,
            meshes=[(spec, self._mesh_pos.get(spec.name)) for spec in self._meshes.values()],
            computations=[c.text for c in self._computations.values()],
            inputs=self._inputs,
            calls=self._calls,
            outputs=self._outputs or [],
            outputs_pos=self._outputs_pos,
            locations=locations,
        )

    def save(self, path, locations: bool = False) -> None:
        """Writes the program's MLIR text to ``path`` (see ``text``)."""
        text = self.text(locations=locations)
        path = os.fspath(path)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)

    @property
    def num_inputs(self) -> int:
        """How many (flat) inputs the program takes."""
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        """How many (flat) outputs the program returns."""
        return len(self._outputs or [])

    def unflatten_outputs(self, leaves):
        """Rebuilds the pytree given to ``p.outputs`` from a flat list of arrays."""
        leaves = list(leaves)
        if self._out_tree is None:
            raise ProgramError(f"{where()}: the program has no outputs yet")
        if len(leaves) != self._out_tree.num_leaves:
            raise ProgramError(f"{where()}: the program has {self._out_tree.num_leaves} outputs, got {len(leaves)}")
        return jax.tree.unflatten(self._out_tree, leaves)

    def lower(
        self, *, topology=None, devices: int | None = None, kind: str | None = None, schedule: str | None = None
    ) -> str:
        """The program lowered to physical devices (``pw-opt --pw-lower``);
        ``topology`` is a TOML/JSON file of islands, ``devices``/``kind``
        describe the default single island, ``schedule`` is the order:
        ``"critical-path"`` (the default), ``"gpipe"`` or ``"1f1b"``
        (``docs/passes.md``). Raises ToolError with pw-opt's diagnostics
        when the program cannot be lowered or scheduled."""
        from .tools import lower

        return lower(
            self.text(locations=True), topology=topology, devices=devices, kind=kind, schedule=check_schedule(schedule)
        )

    def compile(self, client=None, *, schedule: str | None = None, donate_argnums=(), devices: int | None = None):
        """Compiles the program for ``client``'s devices (default:
        ``pw.default_client()``): lowered once, each computation compiled
        once. Returns an ``Executable``: call it with the inputs (numpy
        arrays or ``pw.Array``s) to get the outputs as ``pw.Array``s that
        stay on the devices. ``donate_argnums`` names inputs whose arrays
        the call takes over (as in ``jax.jit``); ``devices`` lowers onto
        only that many of the client's devices; ``schedule`` as in
        ``lower``."""
        from .client import default_client

        if client is None:
            client = default_client()
        return client.compile(self, schedule=schedule, donate_argnums=donate_argnums, devices=devices)

    def run(self, *arrays, devices: int | None = None, topology=None, schedule: str | None = None, trace=None):
        """Runs the program on the given inputs: arrays, or pytrees of
        arrays, whose leaves in order are the inputs in declaration order.
        Returns the outputs as numpy arrays in the pytree given to
        ``p.outputs``.

        It runs on the client this process opened last (``pw.connect``),
        lowered onto ``devices`` of its devices (default: all) and compiled
        once per program, schedule and device count; with no client open,
        on a session of ``devices`` devices opened for this run alone (a
        local pw-server unless ``$PW_SERVER`` names one). With ``topology`` (a TOML/JSON file of
        islands to lower onto) or ``trace`` (a path for a Chrome/Perfetto
        trace of the run), it runs through the ``pw-run`` tool instead.
        Raises ToolError with the diagnostics when the program cannot be
        lowered."""
        schedule = check_schedule(schedule)
        leaves = _run.input_leaves(arrays, [value.aval for value, _, _ in self._inputs])
        if topology is not None or trace is not None:
            dtypes = [v.aval.dtype for v in self._outputs or []]
            return _run.with_pw_run(
                self, leaves, dtypes, devices=devices, topology=topology, schedule=schedule, trace=trace
            )
        return _run.on_session(self, leaves, devices, schedule, self._executables)


def program(name: str = "program", platform: str = "cpu") -> Program:
    """Starts capturing a program: ``with pw.program("name") as p: ...``.
    ``platform`` is the platform jax.jit lowers each computation for."""
    return Program(name, platform)
