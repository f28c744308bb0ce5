"""Python steps of a pw program: ``pw.sidecar(fn, out_specs=...)``.

Inside ``with pw.program(...)``, calling the function on program values
records a call like a jitted function's, on the block's mesh. Its
computation is a stand-in that ``jax.jit`` lowers (zeros of the output
specs, with the shardings asked for), so that every pass places,
transfers and schedules it like any other; the module carries the
function itself in its ``pw.sidecar`` attribute (docs/dialect.md). The
workers that hold the call's devices run the function in their sidecars:
each calls it once with its inputs whole, as numpy arrays, and keeps the
output shards it holds (``frontend/python/pw/_sidecar.py``,
``runtime/exec/src/sidecar.rs``).

Outside a program the function simply runs here, on numpy arrays: the same
Python, in process.

This module writes ``pw_core::python::Function``'s encoding (the
``whole`` convention). May import errors, _mesh and _tracer: not the
program (it reaches it as the current program, whose ``_python_call`` it
sets around the call it records).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import struct
import sys
import sysconfig

import cloudpickle
import jax
import numpy as np

from . import _mesh
from ._tracer import Value
from .errors import ProgramError, where

__all__ = ["SidecarFunction", "sidecar"]

# pw_core::python::MAGIC.
_MAGIC = b"PWPYFN01"


class SidecarFunction:
    """A Python function that a pw program runs in the workers' sidecars
    (see ``sidecar``)."""

    def __init__(self, fun, out_specs, in_shardings=None, out_shardings=None):
        if not callable(fun):
            raise ProgramError(f"{where()}: pw.sidecar takes a function, got {type(fun).__name__}")
        self.fun = fun
        self.out_specs = out_specs
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.__name__ = getattr(fun, "__name__", "sidecar")
        self.__doc__ = getattr(fun, "__doc__", None)
        # Per signature (input tree, shapes, dtypes): the stand-in's jit and
        # the encoded function, made once (a loop calls it many times).
        self._made: dict = {}

    def __repr__(self):
        return f"pw.sidecar({self.__name__})"

    def __call__(self, *args):
        leaves, in_tree = jax.tree.flatten(args)
        if not any(isinstance(leaf, Value) for leaf in leaves):
            # Outside a program: the same Python, here, on numpy arrays.
            return self.fun(*jax.tree.unflatten(in_tree, [np.asarray(x) for x in leaves]))
        program = _mesh.current_program()
        if program is None:
            raise ProgramError(f"{where()}: a value of a finished pw program was passed to {self!r}")
        signature = (in_tree, tuple(_spec(x) for x in leaves))
        made = self._made.get(signature)
        if made is None:
            made = self._made[signature] = self._make(in_tree, leaves)
        jitted, encoded = made
        with program._python_call(encoded):
            return jitted(*args)

    def _make(self, in_tree, leaves):
        """The stand-in's jit for inputs `leaves` in `in_tree`, and the
        encoded function."""
        specs = jax.tree.unflatten(in_tree, [jax.ShapeDtypeStruct(*_spec(x)) for x in leaves])
        out_specs = self.out_specs(*specs) if callable(self.out_specs) else self.out_specs
        out_leaves, out_tree = jax.tree.flatten(out_specs)
        for i, spec in enumerate(out_leaves):
            if not (hasattr(spec, "shape") and hasattr(spec, "dtype")):
                raise ProgramError(
                    f"{where()}: out_specs of {self!r}: leaf #{i} is a {type(spec).__name__}, "
                    "not a shape and dtype (a jax.ShapeDtypeStruct)"
                )
        if not out_leaves:
            raise ProgramError(f"{where()}: {self!r} has no outputs (out_specs is empty)")
        outs = [jax.ShapeDtypeStruct(tuple(s.shape), s.dtype) for s in out_leaves]

        def stand_in(*_):
            return jax.tree.unflatten(out_tree, [jax.numpy.zeros(s.shape, s.dtype) for s in outs])

        stand_in.__name__ = self.__name__
        jitted = jax.jit(
            stand_in,
            in_shardings=self.in_shardings,
            out_shardings=self.out_shardings,
            keep_unused=True,
        )
        return jitted, base64.b64encode(self._encode(in_tree, out_tree)).decode()

    def _encode(self, in_tree, out_tree) -> bytes:
        """``pw_core::python::Function``'s encoding of the function."""
        header = json.dumps({"name": self.__name__, "convention": "whole"}).encode()
        with _by_value(self.fun):
            try:
                pickled = cloudpickle.dumps((self.fun, in_tree, out_tree))
            except Exception as e:
                raise ProgramError(f"{where()}: {self!r} cannot be pickled for the sidecar: {e}") from e
        return _MAGIC + struct.pack("<I", len(header)) + header + pickled


def sidecar(fun=None, *, out_specs, in_shardings=None, out_shardings=None):
    """Makes ``fun`` a Python step of pw programs.

    Called on values inside ``with pw.program(...)``, it is recorded as a
    call on the block's mesh; when the program runs, each worker holding
    that mesh's devices calls ``fun`` in its sidecar (a Python process next
    to the devices, ``pw-worker --sidecar-python``) with the inputs whole,
    as numpy arrays, and keeps the output shards it holds. Outside a
    program it runs here.

    ``out_specs``: the outputs' shapes and dtypes, a pytree of
    ``jax.ShapeDtypeStruct`` (or a function of the inputs' specs that
    returns one); ``fun`` must return numpy (or JAX) arrays of exactly
    those. ``in_shardings`` and ``out_shardings`` lay the arguments and
    results out on the mesh, as in ``jax.jit`` (default: replicated).

    Used as ``@pw.sidecar(out_specs=...)`` or ``pw.sidecar(fun,
    out_specs=...)``."""
    if fun is None:
        return lambda f: SidecarFunction(f, out_specs, in_shardings, out_shardings)
    return SidecarFunction(fun, out_specs, in_shardings, out_shardings)


def _spec(x):
    """(shape, dtype) of an argument: a program value, or a constant (which
    the stand-in's call then refuses by name)."""
    return tuple(np.shape(x)), np.dtype(getattr(x, "dtype", None) or np.result_type(x))


def _installed(path: str) -> bool:
    """Whether a module's file is part of an installation (the standard
    library, site-packages), which a sidecar in the same environment
    imports as well."""
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    path = os.path.abspath(path)
    return any(path.startswith(os.path.abspath(r) + os.sep) for r in roots)


@contextlib.contextmanager
def _by_value(fun):
    """Pickles ``fun``'s own module by value (its code travels with it)
    unless it is installed: the sidecar runs in the worker's directory,
    where a user's script or test module is not importable."""
    name = getattr(fun, "__module__", None)
    module = sys.modules.get(name) if name else None
    path = getattr(module, "__file__", None)
    if module is None or name == "__main__" or path is None or _installed(path) or name.split(".")[0] == "pw":
        yield
        return
    cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        cloudpickle.unregister_pickle_by_value(module)
