"""Checks an install of pw's wheel; scripts/test-wheel.sh runs it with the
Python of a fresh venv, away from the checkout:

* pw, pw_jax_plugin, pw's wire protocol messages and its binaries are
  files of the installed wheel, and no binary needs a library of LLVM or
  MLIR (ldd); the pw-server and pw-worker it starts map no file of the
  checkout, and the worker runs the venv's CPU plugin;
* a Flax NNX + Optax MLP trained for a few steps through JAX's `proxy`
  platform, on a pw-server and a pw-worker started from the wheel's
  binaries, has the losses of the same loop in-process (JAX_PLATFORMS=cpu);
* a `pw.connect()` session (the package starts its own local server)
  compiles a small training step, runs it and matches JAX.

    python check_wheel.py CHECKOUT    # every check; CHECKOUT must stay unused
    python check_wheel.py train OUT   # the loop alone, under this JAX_PLATFORMS
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TOOLS = ("pw-server", "pw-worker", "pw-opt", "pw-run", "pw-status")
STEPS = 5
# The worker's XLA (the CPU plugin) and jaxlib's are different builds.
RTOL, ATOL = 1e-5, 1e-6
TIMEOUT_S = 300
# What a binary must not load from the system: LLVM and MLIR stay inside.
LLVM = re.compile(r"libLLVM|libMLIR|libclang|/llvm-\d+/")


def train(out: str) -> None:
    """A few Adam steps of a small MLP, the loss read back each step."""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(16, 32, rngs=rngs)
            self.out = nnx.Linear(32, 1, rngs=rngs)

        def __call__(self, x):
            return self.out(jax.nn.relu(self.hidden(x)))

    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        optimizer.update(model, grads)
        return loss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 16), dtype=np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True))
    np.save(out, np.array([float(step(model, optimizer, x, y)) for _ in range(STEPS)]))


def check_install() -> str:
    """pw, its proxy plugin, its messages and its tools are files of the
    installed wheel; returns the directory of the tools."""
    import pw.tools
    import pw_jax_plugin
    from pw import _proto

    installed = {os.path.realpath(p.locate()) for p in importlib.metadata.files("pw")}
    for module in (pw, pw_jax_plugin, _proto.pb):
        path = os.path.realpath(module.__file__)
        assert path in installed, f"{module.__name__} is {path}, not a file of the installed wheel"
    bin_dir = os.path.join(os.path.dirname(os.path.realpath(pw.__file__)), "_bin")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    for name in TOOLS:
        path = pw.tools.find_tool(name)
        assert path == os.path.join(bin_dir, name), f"{name}: found {path}, not the wheel's"
        assert os.path.realpath(path) in installed, f"{path} is not in the wheel's RECORD"
        ldd = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        bad = [line.strip() for line in ldd.splitlines() if "not found" in line or LLVM.search(line)]
        assert not bad, f"{name} needs libraries a machine without LLVM lacks:\n" + "\n".join(bad)
        run = subprocess.run([path, "--help"], capture_output=True, text=True, env=env, timeout=60)
        assert run.returncode == 0, f"{name} --help exited {run.returncode}:\n{run.stderr[-2000:]}"
    print(f"install: pw, pw_jax_plugin, pw's messages and {len(TOOLS)} binaries from the wheel; none links LLVM or MLIR")
    return bin_dir


def mapped_files(pid: int) -> set[str]:
    with open(f"/proc/{pid}/maps") as f:
        rows = [line.split(maxsplit=5) for line in f]
    return {row[5].strip() for row in rows if len(row) == 6}


def check_processes(local, bin_dir: str, checkout: str) -> None:
    """The server and worker run the wheel's binaries, the worker the venv's
    CPU plugin, and neither maps a file of the checkout."""
    for proc, name in ((local.server, "pw-server"), (local.worker, "pw-worker")):
        exe = os.path.realpath(f"/proc/{proc.pid}/exe")
        assert exe == os.path.realpath(os.path.join(bin_dir, name)), f"{name} runs {exe}"
        files = mapped_files(proc.pid)
        inside = sorted(f for f in files if f.startswith(checkout + os.sep))
        assert not inside, f"{name} maps files of the checkout: {inside}"
    plugins = [f for f in mapped_files(local.worker.pid) if f.endswith("pjrt_c_api_cpu_plugin.so")]
    prefix = os.path.realpath(sys.prefix) + os.sep
    assert plugins and all(p.startswith(prefix) for p in plugins), f"the worker's plugin: {plugins}"


def run_train(env: dict, out: str, logs=()) -> np.ndarray:
    argv = [sys.executable, os.path.abspath(__file__), "train", out]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        tails = "".join(f"\n--- {p} ---\n{open(p).read()[-3000:]}" for p in logs if os.path.exists(p))
        raise AssertionError(
            f"the loop under JAX_PLATFORMS={env['JAX_PLATFORMS']} exited {proc.returncode}:\n{proc.stderr[-4000:]}{tails}"
        )
    return np.load(out)


def check_proxy(bin_dir: str, checkout: str) -> None:
    from pw._local import LocalServer

    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
    local = LocalServer(1)
    tmp = tempfile.mkdtemp(prefix="pw-wheel-check-")
    try:
        check_processes(local, bin_dir, checkout)
        want = run_train({**env, "JAX_PLATFORMS": "cpu"}, os.path.join(tmp, "cpu.npy"))
        proxy_env = {**env, "JAX_PLATFORMS": "proxy", "JAX_BACKEND_TARGET": f"grpc://{local.address}"}
        logs = [os.path.join(local.logs, f) for f in ("pw-server.log", "pw-worker.log")]
        got = run_train(proxy_env, os.path.join(tmp, "proxy.npy"), logs)
        assert local.alive(), "the server or the worker exited during the run"
    finally:
        local.stop()
        shutil.rmtree(local.logs, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg="losses: proxy vs in-process")
    assert want[-1] < want[0], f"the loop does not learn: {want}"
    diff = np.max(np.abs(got - want) / np.abs(want))
    print(f"proxy: {STEPS} Flax NNX + Optax steps, losses {np.array2string(got, precision=5)}, {diff:.1e} from in-process")


def check_session() -> None:
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    import pw

    def sgd_step(w, x, y):
        loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
        return w - 0.1 * grad, loss

    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 8), dtype=np.float32)
    y = x @ rng.standard_normal((8, 1), dtype=np.float32)
    w0 = np.zeros((8, 1), np.float32)
    step_fn = jax.jit(sgd_step, in_shardings=(P(), P("x"), P("x")), out_shardings=(P(), P()))
    with pw.program("wheel") as p:
        w, xs, ys = p.inputs((w0, x, y))
        with pw.mesh("m", devices=2):
            p.outputs(step_fn(w, xs, ys))
    with pw.connect(devices=2) as client:
        step = p.compile(client)
        w, losses = w0, []
        for _ in range(STEPS):
            w, loss = step(w, x, y)
            losses.append(float(np.asarray(loss)))
        got = np.asarray(w)
    want, want_losses, plain = w0, [], jax.jit(sgd_step)
    for _ in range(STEPS):
        want, loss = plain(want, x, y)
        want_losses.append(float(loss))
    np.testing.assert_allclose(got, np.asarray(want), rtol=RTOL, atol=ATOL, err_msg="pw.connect: weights")
    np.testing.assert_allclose(losses, want_losses, rtol=RTOL, atol=ATOL, err_msg="pw.connect: losses")
    print(f"session: pw.connect() ran {STEPS} steps on 2 devices, as JAX does")


def main(argv: list[str]) -> None:
    if not __debug__:
        sys.exit("check_wheel.py checks with assert: run it without -O")
    if len(argv) == 2 and argv[0] == "train":
        train(argv[1])
        return
    if len(argv) != 1:
        sys.exit(__doc__)
    checkout = os.path.realpath(argv[0])
    bin_dir = check_install()
    check_proxy(bin_dir, checkout)
    check_session()
    print("wheel: every check passed")


if __name__ == "__main__":
    main(sys.argv[1:])
