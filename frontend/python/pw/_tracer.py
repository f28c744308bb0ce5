"""The tracer: a program's values (``pw.Value``, JAX tracers) and the trace
of its block, which accepts exactly one primitive, ``jit``, when user code
calls it directly, and hands each such call to the program to record.
Everything else on a traced value (a ``jnp`` op outside a jitted function,
Python control flow, numpy conversion, a JAX transformation around the
call) raises a ``TracingError`` naming the user's line.

May import errors and _jax_compat: not the program (it knows it only as
the object whose ``_record_call`` it calls), the emitter or the run paths.
"""

from __future__ import annotations

import os
import sys

from . import _jax_compat as compat
from .errors import TracingError, in_jax, is_internal, where

__all__ = ["Value"]


class Value(compat.Tracer):
    """A logical array of a program being captured: a program input or a
    result of a recorded call. It has a shape and dtype but no data."""

    __slots__ = ["node"]

    def __init__(self, trace: "Trace", aval, node):
        super().__init__(trace, aval, trace.origin)
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


class Trace(compat.Trace):
    """Accepts direct calls of jitted functions; refuses everything else.
    `program` records the calls; `origin` is what an escaped value's error
    says it came from."""

    def __init__(self, program, origin: compat.TracerOrigin):
        super().__init__()
        self.program = program
        self.origin = origin

    def process_primitive(self, primitive, tracers, params):
        for t in tracers:
            if isinstance(t, Value) and t.trace is not self:
                raise TracingError(
                    f"{where()}: a value of another pw program ({t.origin.func_src_info}) "
                    "was used here; a program's values exist only inside its own block"
                )
        if not any(isinstance(t, Value) for t in tracers):
            # Constants built inside the block (jnp.ones, ...) run normally.
            return primitive.bind(*tracers, **params)
        if primitive is not compat.jit_p:
            raise TracingError(
                f"{where()}: '{primitive.name}' was applied to a traced value outside a jitted "
                "function; in a pw program only jax.jit functions may be called on "
                "traced values (wrap the computation in jax.jit)"
            )
        call = compat.jit_call(params)
        caller = _caller_kind()
        if caller == "transform":
            raise TracingError(
                f"{where()}: {call.name} was called on a traced value under a JAX transformation "
                "(jax.vmap, jax.grad, ...); a pw program cannot capture a transformed "
                "call: transform inside the jitted function, e.g. jax.jit(jax.vmap(f))"
            )
        if caller == "library" or (call.source_file is not None and in_jax(call.source_file)):
            raise TracingError(
                f"{where()}: '{call.name}' (a JAX library function) was applied to a traced value "
                "outside a jitted function; in a pw program only jax.jit functions of your "
                "own may be called on traced values (wrap the computation in jax.jit)"
            )
        for i, t in enumerate(tracers):
            if not isinstance(t, Value):
                raise TracingError(
                    f"{where()}: argument #{i} of {call.name} is a constant "
                    f"({type(t).__name__}), not a value of the program; pass arrays as "
                    "program inputs, or make the argument static (static_argnums)"
                )
        return self.program._record_call(call, tracers)

    # Calls of other kinds: refused on program values; on constants only,
    # JAX runs them as usual.

    def process_call(self, primitive, f, tracers, params):
        if not any(isinstance(t, Value) for t in tracers):
            return compat.eval_trace.process_call(primitive, f, tracers, params)
        raise TracingError(f"{where()}: '{primitive.name}' cannot be captured; use jax.jit")

    def process_custom_jvp_call(self, primitive, fun, jvp, tracers, *args, **kwargs):
        if not any(isinstance(t, Value) for t in tracers):
            return compat.eval_trace.process_custom_jvp_call(primitive, fun, jvp, tracers, *args, **kwargs)
        raise TracingError(
            f"{where()}: a custom_jvp function (jax.nn.relu is one) was applied to a traced "
            "value outside a jitted function; call it inside a jax.jit function"
        )

    def process_custom_vjp_call(self, primitive, fun, fwd, bwd, tracers, *args, **kwargs):
        if not any(isinstance(t, Value) for t in tracers):
            return compat.eval_trace.process_custom_vjp_call(primitive, fun, fwd, bwd, tracers, *args, **kwargs)
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
        if compat.TRANSFORM_DIR in path:
            return "transform"
        if any(d in path for d in compat.LIBRARY_DIRS):
            kind = "library"
        frame = frame.f_back
    return kind
