"""JAX's side of benches/run.rs: a chain of tiny jitted calls, on one device
and alternating between two devices with jax.device_put, timed after
warm-up. Prints one JSON object of microseconds per node (median of runs);
"alternating" is null where JAX has one device.
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


def chain(nodes, step, alternate, devices):
    x = jax.device_put(jnp.ones((4,), jnp.float32), devices[0])
    start = time.perf_counter()
    for i in range(nodes):
        x = step(x)
        if alternate:
            x = jax.device_put(x, devices[(i + 1) % 2])
    x.block_until_ready()
    return (time.perf_counter() - start) * 1e6 / nodes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    devices = jax.devices(PLATFORM)
    step = jax.jit(lambda x: x * 0.5 + 1.0)
    out = {"jax": jax.__version__, "kind": devices[0].device_kind, "alternating": None}
    # Alternating needs two devices (a one-GPU machine has one).
    kinds = [("single", False)] + ([("alternating", True)] if len(devices) > 1 else [])
    for name, alternate in kinds:
        chain(args.nodes, step, alternate, devices)  # warm-up
        samples = sorted(chain(args.nodes, step, alternate, devices) for _ in range(args.runs))
        out[name] = samples[len(samples) // 2]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
