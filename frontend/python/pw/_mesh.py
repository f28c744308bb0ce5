"""Meshes: ``pw.mesh`` and ``pw.unplaced``, the MeshSpec each makes, the
placement of the calls in their block, and how shardings fit a mesh.

Owns the thread's capture context: the program whose block the thread is
in and the mesh its calls run on. May import errors, _emit and
_jax_compat: not the tracer, the program or the run paths (it knows the
program only as the object it calls ``_declare`` on).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, PartitionSpec

from . import _jax_compat as compat
from ._emit import is_symbol
from .errors import ProgramError, PwError, where, where_raised

__all__ = ["MeshSpec", "mesh", "unplaced"]

_state = threading.local()


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
    try:
        with compat.context_mesh(placeholder):
            yield
    except Exception as e:
        error = sharding_error(e, spec)
        if error is None:
            raise
        raise error from e
    finally:
        _state.placement = previous


def placement() -> MeshSpec | None:
    """The mesh of the calls made now: the innermost mesh block's."""
    return getattr(_state, "placement", None)


def current_program():
    """The program whose block this thread is in, if any."""
    return getattr(_state, "program", None)


def set_current_program(program) -> None:
    """Marks `program` (None: no program) as the one being captured."""
    _state.program = program


def _current_program():
    program = current_program()
    if program is None:
        raise ProgramError(f"{where()}: pw.mesh and pw.unplaced belong inside `with pw.program(...)`")
    return program


def sharding_error(e: BaseException, spec: MeshSpec | None) -> ProgramError | None:
    """The ProgramError for an exception JAX raised while resolving a
    jitted function's shardings against the block's mesh; None for any
    other exception."""
    if isinstance(e, PwError):
        return None
    message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if isinstance(e, RuntimeError) and compat.NO_CONTEXT_MESH_MESSAGE in message:
        return ProgramError(
            f"{where_raised(e.__traceback__)}: a jax.jit with PartitionSpec shardings was called "
            "outside any mesh; call it inside `with pw.mesh(...)` (placed) or `with "
            "pw.unplaced(devices=N)` (placed by the passes), whose axes the PartitionSpecs name"
        )
    if isinstance(e, compat.IndivisibleError):
        what = "does not divide the array"
    elif isinstance(e, ValueError) and compat.MISSING_AXIS_MESSAGE in message:
        what = "names an axis the mesh lacks"
    else:
        return None
    where_ = where_raised(e.__traceback__)
    on = spec.describe() if spec is not None else "its mesh"
    return ProgramError(f"{where_}: a sharding {what}, so {on} cannot satisfy it: {message}")


def spec_dims(spec: PartitionSpec, rank: int) -> list[list[str]]:
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


def check_sharding(dims, shape, spec: MeshSpec) -> None:
    """A ProgramError unless `dims` (per-dimension axis lists) splits an
    array of `shape` evenly over axes of `spec`, each axis at most once."""
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
