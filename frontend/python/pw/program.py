"""Capture a block of ``jax.jit`` calls as one pw program: the public
``Program`` API.

Inside ``with pw.program(...) as p:`` every call of a jitted function on a
traced value is recorded, not run: it becomes a ``pw.call`` node whose
computation is the StableHLO that ``jax.jit`` lowers for that call's
signature (lowered once per distinct signature and mesh shape), and whose
operands are the values of earlier calls or program inputs. ``with
pw.mesh(...)`` says where calls run; calls outside any mesh stay unplaced
for the passes to decide. See docs/frontend.md.

The program holds what the block declared and recorded; the pieces are
elsewhere: the trace and its values in _tracer, meshes in _mesh, the
lowering of a call in _computations, the module's text in _emit, the run
paths in _run. May import those, errors, tools and client (never the other
way round): not JAX's private API but through _jax_compat.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os

import jax
import numpy as np
from jax.sharding import PartitionSpec

from . import _emit, _mesh, _run, tools
from . import _jax_compat as compat
from ._computations import Computation, Computations
from ._mesh import MeshSpec, mesh, unplaced
from ._tracer import Trace, Value
from .client import default_client
from .errors import ProgramError, position, user_frame, where

__all__ = ["Program", "program", "mesh", "unplaced", "Value"]


def _here() -> tuple[str, int, int]:
    """(file, line, column) of the user's code."""
    return position(user_frame())


@dataclasses.dataclass
class _Call:
    computation: Computation
    args: list[Value]
    mesh: str | None
    results: list[Value]
    pos: tuple[str, int, int]


class Program:
    """A pw program being captured (inside ``with``) or captured (after)."""

    def __init__(self, name: str = "program", platform: str = "cpu"):
        if not _emit.is_symbol(name):
            raise ProgramError(f"{where()}: {name!r} is not a valid program name")
        self.name = name
        self.platform = platform
        self._trace: Trace | None = None
        self._ctx = None
        self._closed = False
        self._failed = False
        self._meshes: dict[str, MeshSpec] = {}
        self._mesh_pos: dict[str, tuple[str, int, int]] = {}
        self._inputs: list[tuple[Value, str, tuple[str, int, int]]] = []
        self._calls: list[_Call] = []
        self._computations = Computations(taken=self._meshes)
        self._outputs: list[Value] | None = None
        self._outputs_pos = None
        self._out_tree = None
        # The function of the Python step being recorded (_python_call).
        self._python_next: str | None = None
        # p.run's executables, per (text, schedule, devices, session).
        self._executables: dict = {}

    # -- capture -------------------------------------------------------------

    def __enter__(self) -> "Program":
        if self._closed or self._trace is not None:
            raise ProgramError(f"{where()}: a pw.program block can be entered only once")
        if _mesh.current_program() is not None:
            raise ProgramError(f"{where()}: pw.program blocks cannot be nested")
        origin = compat.TracerOrigin(
            func_src_info=f"the `with pw.program({self.name!r})` block at {where()}",
            traced_for="pw.program (its values exist only inside the block; run the program with p.run)",
        )
        self._trace = Trace(self, origin)
        self._ctx = compat.set_current_trace(self._trace)
        self._ctx.__enter__()
        _mesh.set_current_program(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _mesh.set_current_program(None)
        self._ctx.__exit__(exc_type, exc, tb)
        # Any later use of this program's values is an escaped tracer.
        self._trace.invalidate()
        self._closed = True
        if exc is not None:
            self._failed = True
            error = _mesh.sharding_error(exc, None) if isinstance(exc, Exception) else None
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
        _emit.mlir_dtype(spec.dtype)
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
            dims = _mesh.spec_dims(sharding, len(shape))
            _mesh.check_sharding(dims, shape, self._meshes[mesh])
        index = len(self._inputs)
        value = Value(self._trace, compat.ShapedArray(shape, dtype), ("input", index))
        self._inputs.append((value, _emit.array_type(shape, dtype, mesh, dims), _here()))
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
            if not (isinstance(leaf, Value) and leaf.trace is self._trace):
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

    @contextlib.contextmanager
    def _python_call(self, encoded: str):
        """Makes the jit call recorded in the block the stand-in of a
        Python step (pw.sidecar) whose function is `encoded`."""
        self._python_next = encoded
        try:
            yield
        finally:
            self._python_next = None

    def _record_call(self, call: compat.JitCall, args) -> list[Value]:
        """Records a jit call of the block (the trace's hand-off); returns
        its results, values of the program."""
        placement = _mesh.placement()
        for i, aval in enumerate(call.out_avals):
            _emit.mlir_dtype(getattr(aval, "dtype", None), f" (result #{i} of {call.name})")
        python, self._python_next = self._python_next, None
        computation = self._computations.of(call, placement, self.platform, python)
        index = len(self._calls)
        results = [Value(self._trace, aval, ("call", index, i)) for i, aval in enumerate(call.out_avals)]
        mesh_name = placement.name if placement is not None else None
        self._calls.append(_Call(computation, list(args), mesh_name, results, _here()))
        return results

    # -- results ---------------------------------------------------------------

    def text(self, locations: bool = False) -> str:
        """The program as pw MLIR text. With ``locations``, its meshes,
        inputs, calls and outputs carry the Python source positions that
        declared them, so pw-opt and pw-run diagnostics name those lines."""
        if not self._closed:
            raise ProgramError(f"{where()}: the program is complete only after its `with` block")
        if self._failed:
            raise ProgramError(f"{where()}: the capture of program {self.name!r} failed; there is no program")

        return _emit.module_text(
            self.name,
            meshes=[(spec, self._mesh_pos.get(spec.name)) for spec in self._meshes.values()],
            computations=self._computations.texts(),
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
        text = self.text(locations=True)
        return tools.lower(text, topology=topology, devices=devices, kind=kind, schedule=tools.check_schedule(schedule))

    def compile(self, client=None, *, schedule: str | None = None, donate_argnums=(), devices: int | None = None):
        """Compiles the program for ``client``'s devices (default:
        ``pw.default_client()``): lowered once, each computation compiled
        once. Returns an ``Executable``: call it with the inputs (numpy
        arrays or ``pw.Array``s) to get the outputs as ``pw.Array``s that
        stay on the devices. ``donate_argnums`` names inputs whose arrays
        the call takes over (as in ``jax.jit``); ``devices`` lowers onto
        only that many of the client's devices; ``schedule`` as in
        ``lower``."""
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
        schedule = tools.check_schedule(schedule)
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
