"""The front end's one door to JAX's private API.

Every private JAX name pw uses (``jax._src``, JAX's own source layout, the
params of its ``jit`` primitive, the texts of its errors) is here, each
with what pw uses it for and since which JAX release it is where it is
(pyproject.toml pins the release pw runs with). ``tests/test_jax_compat.py``
checks each one against the installed JAX, so a JAX upgrade that moves one
fails there first, naming it.

Owns: nothing of pw's own but these adapters. May import JAX and the
standard library only: no other ``pw`` module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any

from jax._src import config as _config
from jax._src import core as _core
from jax._src import pjit as _pjit
from jax._src import sharding as _sharding
from jax._src import sharding_impls as _sharding_impls
from jax._src.lib.mlir import ir as _ir

__all__ = [
    "LIBRARY_DIRS",
    "MISSING_AXIS_MESSAGE",
    "NO_CONTEXT_MESH_MESSAGE",
    "TRANSFORM_DIR",
    "IndivisibleError",
    "JitCall",
    "ShapedArray",
    "StringAttr",
    "Trace",
    "Tracer",
    "TracerOrigin",
    "UnspecifiedValue",
    "colocated_deserialize",
    "context_mesh",
    "eval_trace",
    "jaxpr_as_fun",
    "jit_call",
    "jit_p",
    "set_current_trace",
]

# -- the capture's trace (jax._src.core) --------------------------------------

# The base of the capture's trace: pw calls __init__() and invalidate()
# (jax 0.4.36, the "stackless" core) and overrides process_primitive,
# process_call, process_custom_jvp_call and process_custom_vjp_call (their
# arguments as since jax 0.4.2); a primitive's .name and .bind as since 0.4.2.
Trace = _core.Trace
# JAX's evaluating trace: runs a call on constants only as outside the
# capture (jax 0.4.36).
eval_trace = _core.eval_trace
# Makes the capture's trace current for its block (a context manager; 0.4.36).
set_current_trace = _core.set_current_trace
# The aval of a program input, ShapedArray(shape, dtype); pw prints avals
# with str_short() (jax._src.core since 0.4.2).
ShapedArray = _core.ShapedArray
# A closed jaxpr as a Python function, which pw jits again for its mesh
# (jax._src.core since 0.4.2).
jaxpr_as_fun = _core.jaxpr_as_fun


@dataclasses.dataclass(frozen=True)
class TracerOrigin:
    """Where a tracer comes from, in the fields JAX's escaped-tracer error
    reads ("The function being traced when the value leaked was
    {func_src_info} traced for {traced_for}"; since jax 0.4.2)."""

    func_src_info: str
    traced_for: str


class Tracer(_core.Tracer):
    """The base of pw.Value: JAX's tracer (jax._src.core since 0.4.2; its
    __init__ takes the aval since 0.10.0), with its private attributes
    behind names of pw's: ``trace`` (JAX's `_trace`), and ``origin``, in
    the `_debug_info` slot that JAX's escaped-tracer error reads."""

    __slots__ = ["_debug_info"]

    def __init__(self, trace, aval, origin: TracerOrigin):
        super().__init__(trace, aval)
        self._debug_info = origin

    @property
    def trace(self):
        """The trace the tracer belongs to."""
        return self._trace

    @property
    def origin(self) -> TracerOrigin:
        return self._debug_info


# -- jax.jit calls (jax._src.pjit) --------------------------------------------

# The primitive a jax.jit call binds: the one primitive a capture records
# (jit_p since jax 0.7.0; pjit_p before).
jit_p = _pjit.jit_p


@dataclasses.dataclass(frozen=True)
class JitCall:
    """What pw reads of one bind of ``jit_p``: its params ``name``,
    ``jaxpr``, ``in_shardings``, ``out_shardings`` and ``donated_invars``
    (so named since jax 0.4.2) and the jaxpr's avals and debug info."""

    name: str
    jaxpr: Any  # the ClosedJaxpr: what the call computes
    in_avals: tuple
    out_avals: tuple
    in_shardings: tuple  # per argument: a Sharding, a PartitionSpec or UnspecifiedValue
    out_shardings: tuple
    donated_invars: tuple  # per argument: whether it is donated
    source_file: str | None  # the file defining the jitted function, when JAX knows it


def jit_call(params) -> JitCall:
    """The JitCall of a bind of ``jit_p`` with these params."""
    closed = params["jaxpr"]
    return JitCall(
        name=params["name"],
        jaxpr=closed,
        in_avals=tuple(closed.in_avals),
        out_avals=tuple(closed.out_avals),
        in_shardings=params["in_shardings"],
        out_shardings=params["out_shardings"],
        donated_invars=params["donated_invars"],
        source_file=_source_file(closed),
    )


def _source_file(closed) -> str | None:
    """The file of a jaxpr's function, from its debug info's func_src_info,
    "name at file:line" (jaxpr.debug_info since jax 0.4.21, DebugInfo's
    func_src_info since 0.4.7)."""
    info = getattr(closed.jaxpr, "debug_info", None)
    src = getattr(info, "func_src_info", None) or ""
    _, sep, place = src.rpartition(" at ")
    return place.rsplit(":", 1)[0] if sep else None


# What a jit's sharding is when the call gives none (jax._src.sharding_impls
# since 0.4.9).
UnspecifiedValue = _sharding_impls.UnspecifiedValue

# -- meshes and shardings -------------------------------------------------------


@contextlib.contextmanager
def context_mesh(mesh):
    """Makes the concrete ``mesh`` (and its abstract mesh) JAX's context
    mesh for the block, as jax.set_mesh does but also while a trace is
    active, where jax.set_mesh refuses to run (jax._src.config's
    abstract_mesh_context_manager and device_context, since jax 0.4.38)."""
    prev_abstract = _config.abstract_mesh_context_manager.swap_local(mesh.abstract_mesh)
    prev_concrete = _config.device_context.swap_local(mesh)
    try:
        yield
    finally:
        _config.device_context.set_local(prev_concrete)
        _config.abstract_mesh_context_manager.set_local(prev_abstract)


# Raised when a sharding does not divide an array's dimension
# (jax._src.sharding since 0.9.1).
IndivisibleError = _sharding.IndivisibleError
# In the first line of the RuntimeError of a jax.jit with PartitionSpec
# shardings called outside any mesh (since jax 0.7.1).
NO_CONTEXT_MESH_MESSAGE = "non-empty mesh in context"
# In the first line of the ValueError of a sharding naming an axis its mesh
# lacks (since jax 0.4.32).
MISSING_AXIS_MESSAGE = "is not found in mesh"

# -- the computations' text (jax._src.lib.mlir) -------------------------------

# MLIR's string attribute, to rename a lowered module (jax._src.lib.mlir.ir,
# jaxlib's MLIR bindings, since jax 0.2.26).
StringAttr = _ir.StringAttr

# -- colocated Python (the sidecar) -------------------------------------------


def colocated_deserialize(data: bytes) -> Any:
    """What ``jax.experimental.colocated_python`` pickled for a program: the
    tuple (function, input tree, input specs, output tree, output specs,
    devices), its devices looked up by id among this process's CPU
    devices (``serialization._deserialize``, since jax 0.4.34; the tuple's
    form since 0.10.2)."""
    from jax.experimental.colocated_python import serialization

    return serialization._deserialize(data)


# -- JAX's source layout ----------------------------------------------------------

# Directories of JAX's modules whose functions are themselves jitted (jnp,
# lax, nn, ops, random, scipy): a call of one on a traced value is a library
# op, not a user computation (jax/_src/random a directory since jax 0.10.2,
# the others since 0.2.4).
LIBRARY_DIRS = tuple(
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
# The directory JAX's transformations (vmap, grad, ...) run their rules
# from (jax/_src/interpreters since jax 0.4.3).
TRANSFORM_DIR = os.sep + os.path.join("jax", "_src", "interpreters") + os.sep
