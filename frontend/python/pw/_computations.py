"""A program's computations: each distinct jit call lowered once, by
``jax.jit``, to StableHLO for the mesh it runs on, named after its
function, and shared by every call whose module text is the same.

May import errors, _jax_compat and _mesh: not the tracer, the emitter, the
program or the run paths.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re

import jax
from jax.sharding import NamedSharding, PartitionSpec

from . import _jax_compat as compat
from ._mesh import MeshSpec, sharding_error
from .errors import ProgramError, TracingError, where

# The name a computation's module carries while its text is compared.
_PLACEHOLDER = "__pw_computation__"


@dataclasses.dataclass
class Computation:
    name: str
    text: str


class Computations:
    """The computations of one program, by name; their names avoid those
    in `taken` (the program's meshes)."""

    def __init__(self, taken):
        self._taken = taken
        self._by_name: dict[str, Computation] = {}
        self._by_content: dict[tuple[str, str], Computation] = {}
        self._lowered: dict = {}

    def __contains__(self, name) -> bool:
        return name in self._by_name

    def texts(self) -> list[str]:
        return [c.text for c in self._by_name.values()]

    def of(
        self, call: compat.JitCall, placement: MeshSpec | None, platform: str, python: str | None = None
    ) -> Computation:
        """The computation of `call` on `placement`: lowered for `platform`
        the first time its jaxpr, shardings and mesh shape are seen. With
        `python` (a Python step's function, encoded), `call` is its
        stand-in and the module carries the function."""
        shape_key = (placement.axes, placement.shape) if placement is not None else None
        key = (id(call.jaxpr), repr(call.in_shardings), repr(call.out_shardings), shape_key, python)
        hit = self._lowered.get(key)
        if hit is not None:
            return hit[0]
        prefix = "jit_" if python is None else "py_"
        computation = self._add(prefix, call.name, _lower(call, placement, platform, python))
        # Holding the jaxpr keeps its id from being reused.
        self._lowered[key] = (computation, call.jaxpr)
        return computation

    def _add(self, prefix: str, fname: str, text: str) -> Computation:
        """The computation of function `fname` whose module text is `text`.

        One computation per function name and module text: the same
        function reached through another jaxpr (a fresh jax.jit object, a
        redefinition in a loop, another mesh of the same shape) is shared."""
        base = prefix + re.sub(r"[^A-Za-z0-9_]", "_", fname)
        content = (base, hashlib.sha256(text.encode()).hexdigest())
        known = self._by_content.get(content)
        if known is not None:
            return known
        name, k = base, 0
        while name in self._by_name or name in self._taken:
            k += 1
            name = f"{base}_{k}"
        placeholder = f'sym_name = "{_PLACEHOLDER}"'
        if placeholder not in text:
            raise TracingError(f"{where()}: unexpected module text from JAX for {fname}")
        computation = Computation(name, text.replace(placeholder, f'sym_name = "{name}"', 1))
        self._by_name[name] = computation
        self._by_content[content] = computation
        return computation


def _lower(call: compat.JitCall, placement: MeshSpec | None, platform: str, python: str | None) -> str:
    """The StableHLO text of `call` on `placement` for `platform`, in
    generic op form, its module named _PLACEHOLDER (and with `python`, its
    `pw.sidecar` attribute)."""
    fun = compat.jaxpr_as_fun(call.jaxpr)
    avals = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in call.in_avals]
    ins = tuple(_resolve(s, placement, call.name) for s in call.in_shardings)
    outs = tuple(_resolve(s, placement, call.name) for s in call.out_shardings)
    donate = tuple(i for i, d in enumerate(call.donated_invars) if d)
    jitted = jax.jit(
        lambda *a: tuple(fun(*a)),
        in_shardings=ins,
        out_shardings=outs,
        donate_argnums=donate,
        keep_unused=True,
    )
    abstract = placement.abstract if placement is not None else None
    scope = jax.sharding.use_abstract_mesh(abstract) if abstract is not None else contextlib.nullcontext()
    try:
        with scope:
            lowered = jitted.trace(*avals).lower(lowering_platforms=(platform,))
    except Exception as e:  # JAX's own message says what is wrong
        error = sharding_error(e, placement)
        if error is not None:
            raise error from e
        raise TracingError(f"{where()}: lowering {call.name} failed: {e}") from e
    module = lowered.compiler_ir("stablehlo")
    with module.context:
        module.operation.attributes["sym_name"] = compat.StringAttr.get(_PLACEHOLDER)
        if python is not None:
            module.operation.attributes["pw.sidecar"] = compat.StringAttr.get(python)
        return module.operation.get_asm(print_generic_op_form=True)


def _resolve(sharding, placement: MeshSpec | None, fname: str):
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
    if sharding is None or isinstance(sharding, compat.UnspecifiedValue):
        return NamedSharding(abstract, PartitionSpec())
    raise ProgramError(
        f"{where()}: {fname} has a {type(sharding).__name__} sharding; inside a pw mesh "
        "give PartitionSpecs or NamedShardings"
    )
