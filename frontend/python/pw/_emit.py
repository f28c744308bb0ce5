"""The text of the pw dialect, as the front end writes it: element types,
``!pw.array<...>`` types, shardings, symbol names, string literals,
locations, mesh declarations and the program's module.

This is the one place Python writes the dialect's syntax (docs/dialect.md
defines it). May import errors, numpy and jax.numpy (for bfloat16) only:
not JAX's private API, the tracer or the program.
"""

from __future__ import annotations

import re
from typing import Sequence

import jax.numpy as jnp
import numpy as np

from .errors import ProgramError, where

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
    np.dtype(jnp.bfloat16): "bf16",
    np.dtype("float32"): "f32",
    np.dtype("float64"): "f64",
    np.dtype("complex64"): "complex<f32>",
    np.dtype("complex128"): "complex<f64>",
    np.dtype(jnp.float8_e5m2): "f8E5M2",
    np.dtype(jnp.float8_e4m3fn): "f8E4M3FN",
    np.dtype(jnp.float8_e4m3b11fnuz): "f8E4M3B11FNUZ",
    np.dtype(jnp.float8_e5m2fnuz): "f8E5M2FNUZ",
    np.dtype(jnp.float8_e4m3fnuz): "f8E4M3FNUZ",
    np.dtype(jnp.float8_e4m3): "f8E4M3",
    np.dtype(jnp.float8_e3m4): "f8E3M4",
    np.dtype(jnp.float8_e8m0fnu): "f8E8M0FNU",
    # Sub-byte types: one byte per element on the host, as ml_dtypes holds them.
    np.dtype(jnp.int2): "i2",
    np.dtype(jnp.int4): "i4",
    np.dtype(jnp.uint2): "ui2",
    np.dtype(jnp.uint4): "ui4",
    np.dtype(jnp.float4_e2m1fn): "f4E2M1FN",
}

_NAME = r"[A-Za-z_][A-Za-z0-9_$.]*"


def is_symbol(name) -> bool:
    """Whether `name` can be a symbol of the module (@name)."""
    return isinstance(name, str) and re.fullmatch(_NAME, name) is not None


def mlir_dtype(dtype, what: str = "") -> str:
    """The element type of a pw array of `dtype`; a ProgramError naming
    `what` for a dtype pw arrays cannot hold."""
    try:
        return _DTYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        supported = ", ".join(sorted(str(d) for d in _DTYPES))
        raise ProgramError(f"{where()}: pw arrays cannot hold {dtype}{what} (supported: {supported})") from None


def array_type(shape, dtype, mesh: str | None = None, sharding=None) -> str:
    """``!pw.array<...>`` of that shape and dtype, on `mesh` (a symbol)
    and split by `sharding` (per-dimension axis lists) when given."""
    dims = "".join(f"{d}x" for d in shape)
    text = f"{dims}{mlir_dtype(dtype)}"
    if mesh is not None:
        text += f", @{mesh}"
        if sharding is not None:
            text += ", " + _sharding_text(sharding)
    return f"!pw.array<{text}>"


def _sharding_text(dims: Sequence[Sequence[str]]) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in dims) + "]"


def mlir_string(text: str) -> str:
    """`text` as the body of an MLIR string literal."""
    out = []
    for b in text.encode("utf-8"):
        if b < 0x20 or b >= 0x7F or b in (0x22, 0x5C):
            out.append(f"\\{b:02X}")
        else:
            out.append(chr(b))
    return "".join(out)


def loc(pos) -> str:
    """The location suffix of an op at `pos`, (file, line, column)."""
    file, line, column = pos
    return f' loc("{mlir_string(file)}":{line}:{column})'


def mesh_declaration(spec) -> str:
    """The ``pw.mesh`` op declaring `spec` (a MeshSpec with a name)."""
    axes = ", ".join(f'"{a}"={s}' for a, s in zip(spec.axes, spec.shape))
    attrs = []
    if spec.kind is not None:
        attrs.append(f'kind = "{mlir_string(spec.kind)}"')
    if spec.same_island_as is not None:
        attrs.append(f"same_island_as = @{spec.same_island_as}")
    suffix = " {" + ", ".join(attrs) + "}" if attrs else ""
    return f"pw.mesh @{spec.name} [{axes}]{suffix}"


def module_text(name, meshes, computations, inputs, calls, outputs, outputs_pos, locations: bool) -> str:
    """The program's module: `meshes` as (MeshSpec, position) pairs, the
    `computations`' texts, `inputs` as (value, type, position), the
    recorded `calls` (computation, args, mesh, results, pos) and the
    `outputs` values, returned at `outputs_pos`. With `locations`, each
    op carries its position."""

    def at(pos):
        return loc(pos) if locations and pos is not None else ""

    lines = [f"module @{name} {{"]
    lines.extend("  " + mesh_declaration(spec) + at(pos) for spec, pos in meshes)
    for text in computations:
        lines.extend("  " + line if line else line for line in text.rstrip().splitlines())
    names: dict[int, str] = {}
    types: dict[int, str] = {}
    args = []
    for i, (value, type_text, pos) in enumerate(inputs):
        names[id(value)] = f"%arg{i}"
        types[id(value)] = type_text
        args.append(f"%arg{i}: {type_text}{at(pos)}")
    body = [_call_text(n, call, names, types) + at(call.pos) for n, call in enumerate(calls)]
    out_types = [types[id(v)] for v in outputs]
    lines.append(f"  func.func @main({', '.join(args)}) -> {_results(out_types)} {{")
    lines.extend(body)
    returned = f"{', '.join(names[id(v)] for v in outputs)} : {', '.join(out_types)}"
    lines.append(f"    return {returned}{at(outputs_pos)}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _call_text(n: int, call, names: dict[int, str], types: dict[int, str]) -> str:
    """The ``pw.call`` op of the `n`th call, without its location; names
    and types its results in `names` and `types` (by id) for later ops."""
    result_types = [array_type(r.aval.shape, r.aval.dtype, call.mesh) for r in call.results]
    for i, r in enumerate(call.results):
        names[id(r)] = f"%{n}" if len(call.results) == 1 else f"%{n}#{i}"
        types[id(r)] = result_types[i]
    lhs = f"%{n} = " if len(call.results) == 1 else (f"%{n}:{len(call.results)} = " if call.results else "")
    operands = ", ".join(names[id(a)] for a in call.args)
    operand_types = ", ".join(types[id(a)] for a in call.args)
    on = f" on @{call.mesh}" if call.mesh else ""
    return f"    {lhs}pw.call @{call.computation.name}({operands}){on} : ({operand_types}) -> {_results(result_types)}"


def _results(types: list[str]) -> str:
    """A function type's results: one type, or a parenthesized list."""
    return types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"
