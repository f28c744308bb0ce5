"""JAX's side of benches/runtime_core.sh: the same operations as
runtime/benches/dispatch.rs, through jax.jit and jax.device_put.

Prints one JSON object of [median, p90] microseconds per operation.
"""

import argparse
import json
import os
import time

# PW_BENCH_JAX_PLATFORM picks JAX's backend (cpu unless set: `cuda` on a GPU).
PLATFORM = os.environ.get("PW_BENCH_JAX_PLATFORM", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("JAX_PLATFORMS", PLATFORM)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def measure(warmup, iters, f):
    """Median and p90 (µs) of `iters` timed calls after `warmup` untimed ones."""
    for _ in range(warmup):
        f()
    samples = []
    for _ in range(iters):
        start = time.perf_counter_ns()
        made = f()
        samples.append((time.perf_counter_ns() - start) / 1e3)
        del made
    samples.sort()
    return [round(samples[iters // 2], 3), round(samples[iters * 9 // 10], 3)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    args = parser.parse_args()
    devices = jax.devices(PLATFORM)
    affine = jax.jit(lambda x: x * 2.0 + 1.0)
    x = jax.device_put(jnp.array([1.0, 2.0, 3.0, 4.0], dtype=jnp.float32), devices[0])
    x.block_until_ready()
    w, n = args.warmup, max(args.iters, 10)
    out = {
        "jax": jax.__version__,
        "iters": n,
        "execute_dispatch": measure(w, n, lambda: affine(x)),
        "execute_round_trip": measure(w, n, lambda: affine(x).block_until_ready()),
        "platform": devices[0].platform,
        "kind": devices[0].device_kind,
        # One device: nothing to copy to (a put to the same device is no copy).
        "copy_dispatch": None,
        "copy_round_trip": None,
    }
    # The pieces of a hop between hosts: a fresh result read to the host
    # (its creation untimed: JAX caches what it read), and bytes put on the
    # device; JAX has no async-transfer buffer.
    samples = []
    for i in range(w + n):
        y = affine(x).block_until_ready()
        start = time.perf_counter_ns()
        np.asarray(y)
        if i >= w:
            samples.append((time.perf_counter_ns() - start) / 1e3)
    samples.sort()
    out["to_host"] = [round(samples[n // 2], 3), round(samples[n * 9 // 10], 3)]
    host = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    out["from_host"] = measure(w, n, lambda: jax.device_put(host, devices[0]).block_until_ready())
    out["async_write"] = None
    if len(devices) > 1:
        out["copy_dispatch"] = measure(w, n, lambda: jax.device_put(x, devices[1]))
        out["copy_round_trip"] = measure(
            w, n, lambda: jax.device_put(x, devices[1]).block_until_ready()
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
