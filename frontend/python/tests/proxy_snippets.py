"""Plain JAX programs, as a user writes them, that test_proxy.py runs twice:
in-process on 4 CPU devices and under JAX_PLATFORMS=proxy against a pw-server
with two workers of 2 devices each (devices 0-1 on one, 2-3 on the other).

Each snippet is a function of no arguments that returns a dict of numpy
arrays and Python scalars (bool, int, float, str), everything it wants
compared; it fetches what it computed itself (np.asarray), so that nothing
of JAX's leaves the process. Snippets are small and deterministic: fixed
seeds, a few steps, seconds on 2 cores.

Run one in this process's JAX, whatever JAX_PLATFORMS says:

    python proxy_snippets.py NAME OUT.npz    # the result, as .npz
    python proxy_snippets.py --list          # the snippets' names

An exception a snippet does not catch itself is a failure: a traceback on
stderr and exit status 1; a missing or unknown snippet is status 2.

Keys ending in `_bf16` hold bfloat16 results (stored as float32) and are
compared loosely; a snippet can ask for other float tolerances with
`@snippet(rtol=..., atol=...)`.
"""

from __future__ import annotations

import gc
import os
import sys
import traceback

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

# name -> function, in the order they are defined (the first one, `devices`,
# is the one that tells whether the proxy works at all).
SNIPPETS: dict = {}
# name -> {"rtol": ..., "atol": ...}: float32 tolerances other than the default.
TOLERANCES: dict = {}


def snippet(fn=None, **tolerances):
    """Registers a snippet (`@snippet` or `@snippet(rtol=..., atol=...)`)."""

    def register(f):
        SNIPPETS[f.__name__] = f
        if tolerances:
            TOLERANCES[f.__name__] = dict(tolerances)
        return f

    return register(fn) if fn is not None else register


def _index(device) -> int:
    """The position of `device` in jax.devices()."""
    return jax.devices().index(device)


def _indices(array) -> np.ndarray:
    """The positions in jax.devices() of the devices holding `array`."""
    return np.array(sorted(_index(d) for d in array.devices()), dtype=np.int32)


def _mesh(first: int) -> Mesh:
    """A 1-D mesh ('x') over devices first and first+1."""
    return Mesh(np.array(jax.devices()[first : first + 2]), ("x",))


@snippet
def devices():
    """What the program sees: 4 devices, of the CPU platform."""
    ds = jax.devices()
    return {
        "n_devices": len(ds),
        "device_count": jax.device_count(),
        "local_device_count": jax.local_device_count(),
        "distinct_ids": len({d.id for d in ds}),
        "platform": ds[0].platform,
        "platforms": ",".join(sorted({d.platform for d in ds})),
        "default_backend": jax.default_backend(),
        "process_count": jax.process_count(),
    }


@snippet
def put_jit_fetch():
    """device_put of a numpy array, a small jitted function, np.asarray."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6) / 7.0
    xd = jax.device_put(x)

    @jax.jit
    def f(a):
        return jnp.sin(a) * 2.0 + a.sum(axis=1, keepdims=True)

    y = f(xd)
    # The same executable again, on a second upload.
    y2 = f(jax.device_put(x + 1.0))
    return {
        "roundtrip": np.asarray(xd),
        "out": np.asarray(y),
        "out2": np.asarray(y2),
        "shape": np.array(y.shape, dtype=np.int32),
        "dtype": str(y.dtype),
        "on": _indices(y),
    }


@snippet
def named_sharding():
    """A NamedSharding over 2 devices; a jit with that sharding, fetched."""
    mesh = _mesh(0)
    sharding = NamedSharding(mesh, P("x"))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    xs = jax.device_put(x, sharding)
    f = jax.jit(lambda a: a * 3.0 + 1.0, in_shardings=sharding, out_shardings=sharding)
    y = f(xs)
    # A reduction over the sharded axis: XLA inserts the collective.
    total = jax.jit(lambda a: jnp.sum(a, axis=0))(y)
    shards = sorted((s.index[0].start or 0, np.asarray(s.data)) for s in y.addressable_shards)
    return {
        "out": np.asarray(y),
        "total": np.asarray(total),
        "on": _indices(y),
        "n_shards": len(y.addressable_shards),
        "shard0": shards[0][1],
        "shard1": shards[1][1],
        "same_sharding": y.sharding == sharding,
    }


@snippet
def put_across_workers():
    """Put on device 0, move to device 2 (the other worker), compute there."""
    d0, d2 = jax.devices()[0], jax.devices()[2]
    x = jax.device_put(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4), d0)
    a = jax.jit(lambda v: v * v + 0.5)(x)
    b = jax.device_put(a, d2)
    c = jax.jit(lambda v: jnp.exp(v) - v.mean())(b)
    # And back to where it started.
    back = jax.device_put(c, d0)
    d = jax.jit(lambda v, w: v + w)(back, x)
    return {
        "a": np.asarray(a),
        "c": np.asarray(c),
        "d": np.asarray(d),
        "a_on": _indices(a),
        "b_on": _indices(b),
        "c_on": _indices(c),
        "d_on": _indices(d),
    }



@snippet
def large_transfers():
    """Arrays over 1 MiB a shard (the size above which pw moves bytes on
    the workers' data ports, streamed): uploaded and fetched on one device,
    split by rows across both workers, split by columns, replicated, in
    tiles, and from single-device arrays; each fetched and compared with
    the numpy it came from, then moved to one worker and used there."""
    n = 1536
    x = (np.arange(n * n, dtype=np.float32).reshape(n, n) % 977) / 977.0
    ds = jax.devices()
    mesh = Mesh(np.array(ds), ("x",))
    grid = Mesh(np.array(ds).reshape(2, 2), ("x", "y"))
    shardings = {
        "one": SingleDeviceSharding(ds[3]),
        "rows": NamedSharding(mesh, P("x")),
        "columns": NamedSharding(mesh, P(None, "x")),
        "replicated": NamedSharding(mesh, P()),
        "tiles": NamedSharding(grid, P("x", "y")),
    }
    on_one_worker = NamedSharding(_mesh(2), P(None, "x"))
    out = {}
    for name, sharding in shardings.items():
        a = jax.device_put(x, sharding)
        out[f"{name}_exact"] = bool(np.array_equal(np.asarray(a), x))
        # A program runs on one worker's devices: moved there first.
        b = jax.jit(lambda v: v * 2.0 + 1.0)(jax.device_put(a, on_one_worker))
        got = np.asarray(b)
        out[f"{name}_exact_after_jit"] = bool(np.array_equal(got, x * 2.0 + 1.0))
        out[f"{name}_corner"] = got[-3:, -3:]
    rows = n // len(ds)
    parts = [jax.device_put(x[i * rows : (i + 1) * rows], d) for i, d in enumerate(ds)]
    assembled = jax.make_array_from_single_device_arrays((n, n), shardings["rows"], parts)
    out["assembled_exact"] = bool(np.array_equal(np.asarray(assembled), x))
    out["assembled_sum"] = np.asarray(jax.jit(jnp.sum)(jax.device_put(assembled, on_one_worker)))
    return out


def _mlp_init(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, wk = jax.random.split(key)
        w = jax.random.normal(wk, (n_in, n_out), jnp.float32) / np.sqrt(n_in)
        params.append((w, jnp.zeros((n_out,), jnp.float32)))
    return params


def _mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


@snippet(rtol=1e-5, atol=1e-6)
def mlp_descent():
    """Several steps of gradient descent on a small MLP (jax.grad)."""
    key = jax.random.PRNGKey(0)
    key, xk, yk = jax.random.split(key, 3)
    x = jax.random.normal(xk, (16, 4), jnp.float32)
    y = jnp.sin(x.sum(axis=1, keepdims=True)) + 0.1 * jax.random.normal(yk, (16, 1), jnp.float32)
    params = _mlp_init(key, [4, 8, 1])

    def loss(p):
        return jnp.mean((_mlp(p, x) - y) ** 2)

    @jax.jit
    def step(p):
        value, grads = jax.value_and_grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), value

    losses = []
    for _ in range(5):
        params, value = step(params)
        losses.append(np.asarray(value))
    out = {"losses": np.stack(losses), "x": np.asarray(x), "y": np.asarray(y)}
    for i, (w, b) in enumerate(params):
        out[f"w{i}"] = np.asarray(w)
        out[f"b{i}"] = np.asarray(b)
    return out


@snippet
def donate_and_delete():
    """A donated argument is gone after the call; so is a deleted array;
    using either raises."""
    x = jax.device_put(np.arange(8, dtype=np.float32))
    f = jax.jit(lambda a: a * 2.0 + 1.0, donate_argnums=0)
    y = f(x)
    out = {"y": np.asarray(y), "donated_deleted": x.is_deleted()}
    try:
        np.asarray(x + 1.0)
    except Exception as e:  # noqa: BLE001 - the type is the result
        out["donated_use_raised"] = True
        out["donated_use_error"] = type(e).__name__
    else:
        out["donated_use_raised"] = False
        out["donated_use_error"] = ""

    z = jax.device_put(np.ones((2, 3), dtype=np.int32))
    before = z.is_deleted()
    z.delete()
    out["deleted_before"] = before
    out["deleted_after"] = z.is_deleted()
    try:
        np.asarray(z)
    except Exception as e:  # noqa: BLE001
        out["deleted_fetch_raised"] = True
        out["deleted_fetch_error"] = type(e).__name__
    else:
        out["deleted_fetch_raised"] = False
        out["deleted_fetch_error"] = ""
    try:
        jax.jit(lambda a: a + 1)(z)
    except Exception as e:  # noqa: BLE001
        out["deleted_call_raised"] = True
        out["deleted_call_error"] = type(e).__name__
    else:
        out["deleted_call_raised"] = False
        out["deleted_call_error"] = ""
    # The donated call's output, and new work, are unaffected.
    out["after"] = np.asarray(jax.jit(lambda a: a - 1.0)(y))
    return out


@snippet
def scan_and_while():
    """lax.scan (a running sum and a recurrence) and lax.while_loop."""
    xs = np.arange(10, dtype=np.float32) / 3.0

    @jax.jit
    def running(xs):
        def body(carry, x):
            s, h = carry
            s = s + x
            h = 0.9 * h + jnp.cos(x)
            return (s, h), s * h

        (s, h), ys = lax.scan(body, (jnp.float32(0.0), jnp.float32(1.0)), xs)
        return s, h, ys

    s, h, ys = running(xs)

    @jax.jit
    def collatz_steps(n):
        def cond(c):
            return c[0] != 1

        def body(c):
            n, k = c
            return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1

        return lax.while_loop(cond, body, (n, jnp.int32(0)))[1]

    @jax.jit
    def halve_until(x):
        return lax.while_loop(lambda v: jnp.max(v) > 1.0, lambda v: v * 0.5, x)

    return {
        "scan_sum": np.asarray(s),
        "scan_h": np.asarray(h),
        "scan_ys": np.asarray(ys),
        "collatz_27": np.asarray(collatz_steps(jnp.int32(27))),
        "collatz_97": np.asarray(collatz_steps(jnp.int32(97))),
        "halved": np.asarray(halve_until(jnp.array([3.0, 40.0, 0.25], jnp.float32))),
    }


@snippet
def bf16_and_int32():
    """bfloat16 and int32 arithmetic (bf16 results fetched as float32)."""
    a = np.linspace(-2.0, 2.0, 16, dtype=np.float32).reshape(4, 4)
    b = np.arange(16, dtype=np.float32).reshape(4, 4) / 8.0

    @jax.jit
    def bf(a, b):
        a = a.astype(jnp.bfloat16)
        b = b.astype(jnp.bfloat16)
        return a @ b + a * b, jnp.tanh(a) - b

    mm, el = bf(jax.device_put(a), jax.device_put(b))
    i = np.array([7, -7, 2**31 - 1, -(2**31), 12345, 0, 3, -1], dtype=np.int32)
    j = np.array([2, 3, 1, 1, -17, 5, 3, 4], dtype=np.int32)

    @jax.jit
    def ints(i, j):
        return {
            "sum": i + j,  # wraps at the int32 ends
            "prod": i * j,
            "floordiv": i // j,
            "rem": i % j,
            "shift": (i << 3) ^ (j >> 1),
            "max": jnp.maximum(i, j),
            "total": jnp.sum(i // 1024),
        }

    out = {"mm_bf16": np.asarray(mm.astype(jnp.float32)), "el_bf16": np.asarray(el.astype(jnp.float32))}
    out["mm_dtype"] = str(mm.dtype)
    for k, v in ints(jax.device_put(i), jax.device_put(j)).items():
        out[f"int_{k}"] = np.asarray(v)
    out["int_dtype"] = str(out["int_sum"].dtype)
    return out


@snippet
def complex_and_float8():
    """complex64 arithmetic, and float8 arrays put, computed on and fetched
    (their bytes compared exactly, as uint8)."""
    z = (np.arange(8, dtype=np.float32) - 3).astype(np.complex64) * np.complex64(1 + 0.5j)

    @jax.jit
    def cz(z):
        return z * (2 - 1j) + jnp.conj(z), jnp.abs(z)

    zz, mag = cz(jax.device_put(z))
    out = {"z": np.asarray(zz), "mag": np.asarray(mag), "z_dtype": str(zz.dtype)}
    x = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz"):
        t = getattr(jnp, name)

        @jax.jit
        def twice(a):
            return (a.astype(jnp.float32) * 2).astype(t)

        y = twice(jax.device_put(x.astype(t)))
        out[f"{name}_bits"] = np.asarray(y).view(np.uint8)
        out[f"{name}_dtype"] = str(y.dtype)
    return out


@snippet
def sub_byte_types():
    """The sub-byte types (int4, uint4, int2, uint2, float4_e2m1fn), one
    byte per element on the host: put sharded over two devices, computed on,
    made by a program and fetched (their bytes compared exactly, as uint8),
    and int8 bytes bitcast to int4 pairs."""
    sharding = NamedSharding(Mesh(np.array(jax.devices()[:2]), ("x",)), P("x"))
    out = {}
    for name in ("int4", "uint4", "int2", "uint2", "float4_e2m1fn"):
        t = getattr(jnp, name)
        if name.startswith("float"):
            host = np.linspace(-6.0, 6.0, 8, dtype=np.float32).astype(t)
        else:
            low, high = int(jnp.iinfo(t).min), int(jnp.iinfo(t).max)
            host = (np.arange(8) % (high - low + 1) + low).astype(t)

        @jax.jit
        def f(a):
            wide = a.astype(jnp.float32)
            return wide * 2, wide[::-1].astype(t)

        x = jax.device_put(host, sharding)
        doubled, reversed_ = f(x)
        out[f"{name}_put_bits"] = np.asarray(x).view(np.uint8)
        out[f"{name}_doubled"] = np.asarray(doubled)
        out[f"{name}_reversed_bits"] = np.asarray(reversed_).view(np.uint8)
        out[f"{name}_dtype"] = str(reversed_.dtype)
    pairs = lax.bitcast_convert_type(jax.device_put(np.arange(4, dtype=np.int8) * 37), jnp.int4)
    out["bitcast_bits"] = np.asarray(pairs).view(np.uint8)
    return out


@snippet
def memory_analysis():
    """What the compiler planned of memory for a jitted matmul
    (`compile().memory_analysis()`)."""
    f = jax.jit(lambda x, y: jnp.tanh(x @ y) + 1)
    compiled = f.lower(jnp.ones((64, 64)), jnp.ones((64, 32))).compile()
    m = compiled.memory_analysis()
    keys = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes")
    return {k: int(getattr(m, k)) for k in keys}


@snippet
def cost_analysis():
    """What a jitted matmul costs (`compile().cost_analysis()`): flops,
    transcendentals and bytes accessed, from XLA in-process and, through
    pw, from pw's count over the program the controller compiled."""
    f = jax.jit(lambda x, y: jnp.tanh(x @ y) + 1)
    cost = f.lower(jnp.ones((64, 32)), jnp.ones((32, 16))).compile().cost_analysis()
    return {k: float(cost[k]) for k in ("flops", "transcendentals", "bytes accessed")}


@snippet
def compiler_options():
    """Compiler options: a valid one compiles, a misspelled one or a value
    of the wrong type is JAX's error naming it."""

    def f(x):
        return jnp.sqrt(x**2) + 1.0

    out = {"valid": np.asarray(jax.jit(f, compiler_options={"exec_time_optimization_effort": 0.0})(1.0))}
    for key, options, says in [
        ("unknown", {"invalid_key": "invalid_value"}, "No such compile option: 'invalid_key'"),
        ("bad_bool", {"xla_embed_ir_in_executable": "invalid_value"}, "is not a valid bool value"),
    ]:
        try:
            jax.jit(f).lower(1.0).compile(compiler_options=options)
            out[key] = "no error"
        except Exception as e:  # noqa: BLE001 - the exception is the result
            out[key] = f"{type(e).__name__}: names it {says in str(e)}"
    return out


@snippet
def shard_map_psum():
    """A collective inside one worker: psum under shard_map over devices 0-1."""
    mesh = _mesh(0)
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    xs = jax.device_put(x, NamedSharding(mesh, P("x")))

    @jax.jit
    def f(v):
        def local(block):
            return lax.psum(jnp.sum(block, axis=0, keepdims=True), "x")

        return jax.shard_map(local, mesh=mesh, in_specs=P("x"), out_specs=P())(v)

    @jax.jit
    def g(v):
        # Each shard minus the mean over all shards (psum, then divide).
        def local(block):
            n = lax.psum(1, "x")
            return block - lax.psum(block, "x") / n

        return jax.shard_map(local, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(v)

    total = f(xs)
    centered = g(xs)
    return {"total": np.asarray(total), "centered": np.asarray(centered), "centered_on": _indices(centered)}


@snippet
def shape_error_then_recover():
    """A shape error raises; the next computation still works."""
    a = jax.device_put(np.ones((2, 3), dtype=np.float32))
    b = jax.device_put(np.ones((4, 5), dtype=np.float32))
    out = {}
    try:
        np.asarray(jnp.dot(a, b))
    except Exception as e:  # noqa: BLE001
        out["dot_raised"] = True
        out["dot_error"] = type(e).__name__
    else:
        out["dot_raised"] = False
        out["dot_error"] = ""
    f = jax.jit(lambda u, v: u @ v)
    try:
        np.asarray(f(a, b))
    except Exception as e:  # noqa: BLE001
        out["jit_raised"] = True
        out["jit_error"] = type(e).__name__
    else:
        out["jit_raised"] = False
        out["jit_error"] = ""
    # A compiled executable called with the wrong shapes.
    compiled = f.lower(a, a.T).compile()
    try:
        np.asarray(compiled(a, b))
    except Exception as e:  # noqa: BLE001
        out["compiled_raised"] = True
        out["compiled_error"] = type(e).__name__
    else:
        out["compiled_raised"] = False
        out["compiled_error"] = ""
    out["after"] = np.asarray(f(a, a.T) + 1.0)
    out["after_compiled"] = np.asarray(compiled(a * 2.0, a.T))
    return out


@snippet(rtol=1e-5, atol=1e-6)
def two_mesh_pipeline():
    """A stage on devices 0-1, its output moved to devices 2-3, a stage
    there, and back: several steps in a loop."""
    sa = NamedSharding(_mesh(0), P("x"))
    sb = NamedSharding(_mesh(2), P("x"))
    w = np.linspace(-0.5, 0.5, 16, dtype=np.float32).reshape(4, 4)
    stage_a = jax.jit(lambda v, w: jnp.tanh(v @ w), out_shardings=sa)
    stage_b = jax.jit(lambda v: v * 1.5 + jnp.mean(v), out_shardings=sb)
    wa = jax.device_put(w, NamedSharding(_mesh(0), P()))
    x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4) / 32.0, sa)
    outs, a_on, b_on = [], [], []
    for _ in range(4):
        h = stage_a(x, wa)
        h_b = jax.device_put(h, sb)
        y = stage_b(h_b)
        outs.append(np.asarray(y))
        a_on.append(_indices(h))
        b_on.append(_indices(y))
        x = jax.device_put(y, sa)
    return {
        "outs": np.stack(outs),
        "final": np.asarray(x),
        "a_on": np.stack(a_on),
        "b_on": np.stack(b_on),
        "final_on": _indices(x),
    }


@snippet
def reshard():
    """device_put of a sharded array onto other shardings: replicated on the
    same devices, split over the other worker's devices, and over the same
    devices in the other order."""
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    d = jax.devices()
    xs = jax.device_put(x, NamedSharding(_mesh(0), P("x")))
    replicated = jax.device_put(xs, NamedSharding(_mesh(0), P()))
    other = jax.device_put(xs, NamedSharding(_mesh(2), P("x")))
    flipped = jax.device_put(xs, NamedSharding(Mesh(np.array([d[1], d[0]]), ("x",)), P("x")))
    columns = jax.device_put(xs, NamedSharding(_mesh(0), P(None, "x")))
    return {
        "replicated": np.asarray(replicated),
        "other": np.asarray(other),
        "other_on": _indices(other),
        "flipped": np.asarray(flipped),
        "flipped_first_shard": np.asarray(flipped.addressable_shards[0].data),
        "columns": np.asarray(columns),
        "columns_shard": np.asarray(sorted(columns.addressable_shards, key=lambda s: _index(s.device))[1].data),
        "sum": np.asarray(jax.jit(lambda a, b: a + b)(replicated, columns)),
    }


@snippet
def unreduced():
    """Unreduced shardings: a jitted einsum that leaves its sum unreduced
    over an explicit mesh axis (each device holds a partial product), its
    shards read one by one, two such arrays added while unreduced, then
    reduced by `reshard` (a jitted all-reduce)."""
    from jax.sharding import AxisType, reshard

    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",), axis_types=(AxisType.Explicit,))
    with jax.set_mesh(mesh):
        x = jax.device_put(a, P(None, "x"))
        y = jax.device_put(a.T, P("x", None))
        partial = jax.jit(lambda x, y: jnp.einsum("ab,bc->ac", x, y, out_sharding=P(None, None, unreduced={"x"})))
        out = partial(x, y)
        twice = jax.jit(lambda u, v: u + v)(out, out)
        shards = sorted(out.addressable_shards, key=lambda s: _index(s.device))
        reduced = reshard(twice, P(None, None))
        result = {
            "spec": str(out.sharding.spec),
            "shard0": np.asarray(shards[0].data),
            "shard1": np.asarray(shards[1].data),
            "twice_shard1": np.asarray(sorted(twice.addressable_shards, key=lambda s: _index(s.device))[1].data),
            "reduced": np.asarray(reduced),
        }
    return result


@snippet
def layouts():
    """Device memory layouts: what a compiled program says of its
    parameters' and outputs' layouts (default, concrete and chosen by the
    compiler with Layout.AUTO), a column-major output fetched and passed to
    a program that takes that layout, and device_put to a Format."""
    from jax.experimental.layout import Format, Layout

    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    sharding = NamedSharding(_mesh(0), P("x"))
    column = Format(Layout(major_to_minor=(1, 0)), sharding)
    arr = jax.device_put(x, sharding)
    plain = jax.jit(lambda v: v * 2).lower(arr).compile()
    auto = jax.jit(lambda v: v.T, out_shardings=Format(Layout.AUTO)).lower(arr).compile()
    made = jax.jit(lambda v: v * 3, out_shardings=column)(arr)
    takes = jax.jit(lambda v: v + 1, in_shardings=column)
    put = jax.device_put(x, column)
    return {
        "plain_in": str(plain.input_formats[0][0].layout.major_to_minor),
        "plain_out": str(plain.output_formats.layout.major_to_minor),
        "auto_out": str(auto.output_formats.layout.major_to_minor),
        "auto_value": np.asarray(auto(arr)),
        "made_layout": str(made.format.layout.major_to_minor),
        "made": np.asarray(made),
        "taken": np.asarray(takes(made)),
        "put_layout": str(put.format.layout.major_to_minor),
        "put_taken": np.asarray(takes(put)),
    }


@snippet
def tokens():
    """Tokens: one made in a program and one made outside, passed through
    and returned by jitted functions; reading a token's buffer raises."""
    from jax._src import core

    made = jax.lax.create_token()
    outside = jax.lax.create_token(None)
    x, passed = jax.jit(lambda x, t: (x * 2, t))(jnp.arange(8), outside)
    returned = jax.jit(jax.lax.create_token)(1.0)
    try:
        made._buf._value
        message = ""
    except RuntimeError as e:
        message = str(e)
    return {
        "x": np.asarray(x),
        "tokens": all(isinstance(t, core.Token) for t in (made, outside, passed, returned)),
        "read_refused": "Cannot convert a token-shape buffer to a numpy array." in message,
    }


@snippet(rtol=1e-5, atol=1e-6)
def pipelined_microbatches():
    """Microbatches through two stages, as a pipeline is written in plain
    JAX: stage A on devices 0-1, its output put on devices 2-3, stage B
    there; every microbatch is dispatched before any result is fetched, so
    stage B of one microbatch can run while stage A works on the next."""
    sa = NamedSharding(_mesh(0), P("x"))
    sb = NamedSharding(_mesh(2), P("x"))
    # Each stage computes for tens of milliseconds on this machine's CPU
    # devices, well above what dispatching a microbatch costs, so that
    # stage B of one microbatch has time to meet stage A of the next.
    w = jnp.asarray(np.linspace(-1.0, 1.0, 512 * 512, dtype=np.float32).reshape(512, 512) / 32.0)

    def heavy(v, w):
        for _ in range(16):
            v = jnp.tanh(v @ w)
        return v

    stage_a = jax.jit(heavy, out_shardings=sa)
    stage_b = jax.jit(lambda v, w: heavy(v, w) * 2.0, out_shardings=sb)
    wa = jax.device_put(w, NamedSharding(_mesh(0), P()))
    wb = jax.device_put(w, NamedSharding(_mesh(2), P()))
    rng = np.random.default_rng(3)
    batches = [jax.device_put(rng.standard_normal((512, 512), dtype=np.float32), sa) for _ in range(8)]
    outs = [stage_b(jax.device_put(stage_a(x, wa), sb), wb) for x in batches]
    return {"outs": np.stack([np.asarray(o) for o in outs])}



# Snippets that need a library beyond JAX: name -> the module to import.
LIBRARIES: dict = {}


@snippet
def orbax_round_trip():
    """An Orbax StandardCheckpointer saves a tree of sharded arrays (one
    across both workers' devices, one computed on devices 0-1, a bfloat16
    replicated vector and a scalar step) and restores it onto other
    shardings (devices 2-3, split by columns; the computed one across all
    four). Orbax fetches every shard and puts every shard back itself,
    through the client, as JAX programs do."""
    import tempfile

    import orbax.checkpoint as ocp

    every = Mesh(np.array(jax.devices()), ("x",))
    last = _mesh(2)
    w = jax.device_put(np.arange(64 * 8, dtype=np.float32).reshape(64, 8) / 7, NamedSharding(every, P("x")))
    v = jax.jit(lambda a: jnp.tanh(a) * 2 + 1)(
        jax.device_put(np.linspace(-3, 3, 128, dtype=np.float32).reshape(16, 8), NamedSharding(_mesh(0), P("x")))
    )
    b = jax.device_put(jnp.linspace(-1, 1, 8, dtype=jnp.bfloat16), NamedSharding(every, P()))
    step = jax.device_put(np.int32(7), NamedSharding(every, P()))
    tree = {"params": {"w": w, "v": v, "b": b}, "step": step}
    target = {
        "params": {
            "w": jax.ShapeDtypeStruct((64, 8), jnp.float32, sharding=NamedSharding(last, P(None, "x"))),
            "v": jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=NamedSharding(every, P("x"))),
            "b": jax.ShapeDtypeStruct((8,), jnp.bfloat16, sharding=NamedSharding(last, P())),
        },
        "step": jax.ShapeDtypeStruct((), jnp.int32, sharding=NamedSharding(last, P())),
    }
    with tempfile.TemporaryDirectory() as root:
        checkpointer = ocp.StandardCheckpointer()
        checkpointer.save(os.path.join(root, "ck"), tree)
        checkpointer.wait_until_finished()
        got = checkpointer.restore(os.path.join(root, "ck"), target)
    params = got["params"]
    return {
        "w": np.asarray(params["w"]),
        "w_devices": _indices(params["w"]),
        "w_columns": params["w"].addressable_shards[0].data.shape[1],
        "v": np.asarray(params["v"]),
        "v_devices": _indices(params["v"]),
        "b_bf16": np.asarray(params["b"].astype(jnp.float32)),
        "step": np.asarray(got["step"]),
        # The restored arrays are usable: a step on devices 2-3.
        "next": np.asarray(jax.jit(lambda a, c: a * 2 + c.astype(jnp.float32))(params["w"], params["b"])),
    }


LIBRARIES["orbax_round_trip"] = "orbax.checkpoint"


@snippet(rtol=2e-4, atol=2e-5)
def linalg():
    """jnp.linalg and lax.linalg on a batch of float32 and complex64
    matrices (jnp.linalg.eig runs on the host CPU in-process, so that in both
    runs): JAX lowers them to LAPACK custom calls, which run on the
    workers. Vectors are unique only up to sign or phase, so those are
    compared through what they reconstruct or project."""
    from jax._src.lax import linalg as lax_linalg_internal

    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 5, 5)).astype(np.float32)
    spd = (a @ a.transpose(0, 2, 1) + 5 * np.eye(5, dtype=np.float32)).astype(np.float32)
    b = rng.standard_normal((3, 5, 2)).astype(np.float32)
    wide = rng.standard_normal((2, 4, 6)).astype(np.float32)
    z = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))).astype(np.complex64)
    herm = (z @ np.conj(z.transpose(0, 2, 1)) + 4 * np.eye(4)).astype(np.complex64)

    def herm_t(m):
        return jnp.conj(jnp.swapaxes(m, -1, -2))

    @jax.jit
    def real(a, spd, b, wide):
        out = {}
        out["solve"] = jnp.linalg.solve(a, b)
        out["inv"] = jnp.linalg.inv(a)
        out["det"] = jnp.linalg.det(a)
        sign, logdet = jnp.linalg.slogdet(a)
        out["slogdet"] = sign * logdet
        lu, pivots, perm = lax.linalg.lu(a)
        out["lu"], out["pivots"], out["perm"] = lu, pivots, perm
        chol = jnp.linalg.cholesky(spd)
        out["cholesky"] = chol
        out["tri_solve"] = lax.linalg.triangular_solve(chol, b, left_side=True, lower=True)
        q, r = jnp.linalg.qr(wide)
        out["qr_rebuilt"] = q @ r
        out["qr_abs_r_diag"] = jnp.abs(jnp.diagonal(r, axis1=-2, axis2=-1))
        w, v = jnp.linalg.eigh(spd)
        out["eigh_w"] = w
        out["eigh_rebuilt"] = (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2)
        u, s, vt = jnp.linalg.svd(wide, full_matrices=False)
        out["svd_s"] = s
        out["svd_rebuilt"] = (u * s[..., None, :]) @ vt
        uf, sf, vtf = jnp.linalg.svd(wide, full_matrices=True)
        out["svd_full_gram"] = jnp.swapaxes(vtf, -1, -2) @ vtf
        out["svd_values_only"] = jnp.linalg.svd(wide, compute_uv=False)
        out["svd_qr_s"] = lax.linalg.svd(wide, full_matrices=False, compute_uv=False,
                                         algorithm=lax.linalg.SvdAlgorithm.QR)
        out["pinv"] = jnp.linalg.pinv(wide)
        out["norm2"] = jnp.linalg.norm(a, ord=2, axis=(-2, -1))
        h, taus = lax_linalg_internal.geqrf(a)  # the raw QR (LAPACK's reflectors)
        out["ormqr_abs_r"] = jnp.abs(lax.linalg.ormqr(h, taus, a, transpose=True))
        out["ormqr_right"] = jnp.abs(lax.linalg.ormqr(h, taus, jnp.swapaxes(a, -1, -2), left=False))
        w, v = jnp.linalg.eig(a)
        out["eig_w_sorted"] = jnp.sort_complex(w)
        out["eig_rebuilt"] = jnp.real((v * w[..., None, :]) @ jnp.linalg.inv(v))
        out["eigvals"] = jnp.sort_complex(jnp.linalg.eigvals(a))
        return out

    @jax.jit
    def complex_(herm, z):
        out = {}
        w, v = jnp.linalg.eigh(herm)
        out["c_eigh_w"] = w
        out["c_eigh_rebuilt"] = (v * w[..., None, :]) @ herm_t(v)
        out["c_solve"] = jnp.linalg.solve(z, herm)
        out["c_cholesky"] = jnp.linalg.cholesky(herm)
        u, s, vt = jnp.linalg.svd(z)
        out["c_svd_s"] = s
        out["c_svd_rebuilt"] = (u * s[..., None, :]) @ vt
        q, r = jnp.linalg.qr(z)
        out["c_qr_rebuilt"] = q @ r
        w, v = jnp.linalg.eig(z)
        out["c_eig_w_sorted"] = jnp.sort_complex(w)
        out["c_eig_rebuilt"] = (v * w[..., None, :]) @ jnp.linalg.inv(v)
        return out

    out = {k: np.asarray(v) for k, v in real(a, spd, b, wide).items()}
    out.update({k: np.asarray(v) for k, v in complex_(herm, z).items()})
    # A singular matrix: LAPACK reports it, JAX turns it into inf / nan.
    singular = np.ones((4, 4), np.float32)
    out["singular_cholesky_nan"] = bool(np.isnan(np.asarray(jnp.linalg.cholesky(singular))).all())
    return out

def _check(name: str, result) -> dict:
    if not isinstance(result, dict) or not result:
        raise TypeError(f"snippet {name} returned {type(result).__name__}, not a non-empty dict")
    out = {}
    for key, value in result.items():
        if isinstance(value, jax.Array):
            raise TypeError(f"snippet {name}: {key} is a jax.Array; fetch it with np.asarray")
        if not isinstance(value, (np.ndarray, np.generic, bool, int, float, str)):
            raise TypeError(f"snippet {name}: {key} is a {type(value).__name__}")
        out[key] = np.asarray(value)
        if out[key].dtype == object:
            raise TypeError(f"snippet {name}: {key} is an object array")
    return out


# Snippets that only make sense under the proxy (their result is checked
# as is, not against in-process JAX).
PROXY_ONLY: dict = {}


def proxy_only(f):
    PROXY_ONLY[f.__name__] = f
    return f


@proxy_only
def server_error_then_recover():
    """A program pw cannot run (its devices span the two workers) fails
    with the server's message as a JAX exception; the session goes on, and
    the status page lists it like any other."""
    import json

    import grpc

    from pw._proto import pb

    out = {}
    try:
        spanning = NamedSharding(Mesh(np.array(jax.devices()), ("x",)), P("x"))
        bad = jax.jit(lambda a: a * 2, out_shardings=spanning)(np.arange(8, dtype=np.float32))
        np.asarray(bad)
        out["raised"] = False
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out["raised"] = True
        out["type"] = type(e).__name__
        out["message"] = str(e)
    out["after"] = np.asarray(jax.jit(lambda a: a + 1)(np.arange(4, dtype=np.int32)))
    address = os.environ["JAX_BACKEND_TARGET"].removeprefix("grpc://")
    with grpc.insecure_channel(address) as channel:
        overview = channel.unary_unary(
            "/pw.v1.Controller/Overview",
            request_serializer=pb.OverviewRequest.SerializeToString,
            response_deserializer=pb.OverviewReply.FromString,
        )
        sessions = json.loads(overview(pb.OverviewRequest(), timeout=10).json).get("sessions", [])
    out["sessions"] = json.dumps(sessions)
    return out


@proxy_only
def colocated_failures():
    """What fails in a colocated Python function, and what survives it: an
    exception in the function is JAX's exception with the Python
    traceback; a sidecar that exits fails the call it ran, and the next
    call starts a new one, in which a colocated object is made again from
    its constructor's arguments. Returns the sidecar's process ids (the
    test checks they end with the session)."""
    from jax.experimental import colocated_python as cp

    cpus = cp.colocated_cpu_devices(jax.devices())
    x = jax.device_put(np.arange(4, dtype=np.int32), SingleDeviceSharding(cpus[0]))
    out = {}

    @cp.colocated_python
    def fails(a):
        raise ValueError("boom from the sidecar")

    try:
        np.asarray(fails(x))
        out["raised"] = False
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out["raised"] = True
        out["type"] = type(e).__name__
        out["message"] = str(e)

    @cp.colocated_python
    def pid(a):
        return jax.device_put(np.int32(os.getpid()), a.sharding)

    @cp.colocated_python_class
    class Counter:
        def __init__(self, start):
            self.total = start

        def add(self, a):
            self.total += 1
            return jax.device_put(np.int32(self.total), a.sharding)

    counter = Counter(100)
    out["before"] = np.array([int(np.asarray(counter.add(x))) for _ in range(2)])
    out["pid_before"] = np.asarray(pid(x))

    @cp.colocated_python
    def dies(a):
        os._exit(7)

    try:
        np.asarray(dies(x))
        out["died_raised"] = False
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out["died_raised"] = True
        out["died_message"] = str(e)
    out["after"] = np.array([int(np.asarray(counter.add(x))) for _ in range(2)])
    out["pid_after"] = np.asarray(pid(x))
    return out


def _after_donation(out, donated) -> dict:
    """`out` fetched, and what a later use of the `donated` array gives:
    its sum (it was not deleted) or the error."""
    result = {"out": np.asarray(out)}
    try:
        result["sum_after"] = int((donated + 1).sum())
    except Exception as e:  # noqa: BLE001 - the exception is the result
        result["error"] = str(e)
    return result


@proxy_only
def donated_assembly():
    """An array on one device, passed to a call sharded over two that
    donates it: the client assembles it with its copy on the other device
    (reusing their buffers, as IFRT does), and donating the assembly
    deletes them, so the server refuses a later use of the original as JAX
    in-process does (whose client knows it is deleted without asking)."""
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    arr = jnp.arange(16)
    out = jax.jit(lambda x: x * 2, in_shardings=NamedSharding(mesh, P()), donate_argnums=0)(arr)
    return _after_donation(out, arr)


@proxy_only
def moved_custom_layout():
    """A column-major output moved to a device of the other worker arrives
    in the default layout: a program that takes it column-major is refused
    (in-process JAX reads such a copy as other values), and laid out again
    by device_put to a Format it computes the right values."""
    from jax.experimental.layout import Format, Layout

    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    d = jax.devices()
    column = Format(Layout(major_to_minor=(1, 0)), SingleDeviceSharding(d[2]))
    made = jax.jit(lambda v: v * 2, out_shardings=Format(column.layout, SingleDeviceSharding(d[0])))(x)
    moved = jax.device_put(made, d[2])
    takes = jax.jit(lambda v: v + 1, in_shardings=column)
    out = {"moved": np.asarray(moved)}
    try:
        out["taken"] = np.asarray(takes(moved))
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out["error"] = f"{type(e).__name__}: {e}"
    out["again"] = np.asarray(takes(jax.device_put(np.asarray(moved), column)))
    return out


@proxy_only
def donated_remap():
    """device_put with donate=True to the same devices in another order:
    JAX reorders the shards (a remap reusing their buffers) and donates
    the reordered array to a resharding program, so the original is gone
    too; the server refuses a later use of it, as JAX in-process does."""
    d = jax.devices()
    x = jax.device_put(np.arange(16), NamedSharding(Mesh(np.array(d[:2]), ("x",)), P("x")))
    target = NamedSharding(Mesh(np.array([d[1], d[0]]), ("y",)), P("y"))
    out = jax.device_put(x, target, donate=True)
    return _after_donation(out, x)


@proxy_only
def program_across_workers():
    """A jitted computation sharded over all 4 devices, which lie on two
    workers: refused with the reason, and the session goes on."""
    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x")))
    out = {}
    try:
        out["sum"] = float(jax.jit(lambda v: v.sum())(x))
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out["error"] = f"{type(e).__name__}: {e}"
    out["after"] = np.asarray(jax.jit(lambda v: v * 2)(np.arange(4, dtype=np.int32)))
    return out


def run(name: str) -> dict:
    """Runs one snippet in this process; its result as a dict of arrays."""
    return _check(name, {**SNIPPETS, **PROXY_ONLY}[name]())


@snippet(rtol=1e-5, atol=1e-6)
def colocated_python():
    """jax.experimental.colocated_python: a function that works on a sharded
    array with NumPy on the hosts of its devices, a stateful class (a
    counter) on the second worker's devices, and a data loader object whose
    batches feed a jitted training step. Under the proxy they run in the
    sidecar of the worker holding the devices; in-process JAX runs them in
    this process."""
    from jax.experimental import colocated_python as cp

    cpus = cp.colocated_cpu_devices(jax.devices())
    out = {}

    mesh = Mesh(np.array(cpus[:2]), ("x",))
    x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("x")))

    @cp.colocated_python
    def normalize(a):
        host = np.asarray(a)
        scaled = (host - host.mean()) / host.std()
        replicated = NamedSharding(a.sharding.mesh, P())
        return jax.device_put(scaled.astype(np.float32), a.sharding), jax.device_put(
            np.int32(host.size), replicated
        )

    normalized, flag = normalize(x)
    out["normalized"] = np.asarray(normalized)
    out["normalized_devices"] = _indices(normalized)
    out["size"] = np.asarray(flag)
    # Again, with the output specs known (no second specialization).
    again, _ = normalize(x * x)
    out["normalized_again"] = np.asarray(again)

    @cp.colocated_python_class
    class Counter:
        def __init__(self, start):
            self.total = start

        def add(self, a):
            self.total += int(np.asarray(a).sum())
            return jax.device_put(np.array(self.total, dtype=np.int32), a.sharding)

    counter = Counter(100)
    one = jax.device_put(np.ones(3, dtype=np.int32), SingleDeviceSharding(cpus[2]))
    out["counts"] = np.array([int(np.asarray(counter.add(one))) for _ in range(3)])

    @cp.colocated_python_class
    class Loader:
        def __init__(self, seed):
            self.rng = np.random.default_rng(seed)

        def next(self, like):
            batch = self.rng.standard_normal((8, 4)).astype(np.float32)
            return jax.device_put(batch, like.sharding)

    loader = Loader(3)
    target = jnp.arange(4, dtype=jnp.float32)

    @jax.jit
    def step(w, batch):
        def loss(w):
            return jnp.mean((batch @ w - batch @ target) ** 2)

        return w - 0.1 * jax.grad(loss)(w)

    w = jax.device_put(np.zeros(4, np.float32), NamedSharding(mesh, P()))
    for _ in range(4):
        w = step(w, loader.next(w))
    out["trained"] = np.asarray(w)

    # An object dropped by its client is destroyed where it lives (its
    # __del__ runs there), once its methods' executables are gone.
    @cp.colocated_python_class
    class Resource:
        def __init__(self, tag):
            cp._pw_test_resources = getattr(cp, "_pw_test_resources", 0) + tag

        def __del__(self):
            cp._pw_test_resources -= 1

        def echo(self, a):
            return a

    @cp.colocated_python
    def resources(a):
        held = getattr(cp, "_pw_test_resources", 0)
        return jax.device_put(np.array(held, dtype=np.int32), a.sharding)

    one = jax.device_put(np.ones(3, dtype=np.int32), SingleDeviceSharding(cpus[3]))
    resource = Resource(1)
    resource.echo(one).block_until_ready()
    held = [int(np.asarray(resources(one)))]
    del resource
    gc.collect()
    held.append(int(np.asarray(resources(one))))
    out["resources_held"] = np.array(held)
    return out


def main(argv) -> int:
    if argv == ["--list"]:
        print("\n".join(SNIPPETS))
        return 0
    if len(argv) != 2 or argv[0] not in {**SNIPPETS, **PROXY_ONLY}:
        print(f"usage: proxy_snippets.py NAME OUT.npz | --list; NAME one of {', '.join(SNIPPETS)}", file=sys.stderr)
        return 2
    name, path = argv
    try:
        result = run(name)
    except BaseException:  # noqa: BLE001 - any escape is the failure
        traceback.print_exc()
        return 1
    tmp = path + ".tmp.npz"
    np.savez(tmp, **result)
    os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
