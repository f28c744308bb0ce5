"""Unmodified JAX under pw's proxy platform gives what JAX gives in-process.

Each snippet of proxy_snippets.py runs twice, each time in a fresh process:

* in-process JAX on 4 CPU devices (JAX_PLATFORMS=cpu,
  XLA_FLAGS=--xla_force_host_platform_device_count=4), the reference; and
* JAX_PLATFORMS=proxy JAX_BACKEND_TARGET=grpc://ADDRESS (no XLA_FLAGS)
  against one pw-server with two pw-workers of 2 devices each (devices 0-1
  on the first, 2-3 on the second),

and the results must agree: exactly for integers, booleans and strings
(exception class names, device positions), to rtol 1e-6 for float32 unless
the snippet says otherwise, loosely for bfloat16 (keys ending in `_bf16`).

Nothing here is skipped but a snippet that needs a library beyond JAX
(`proxy_snippets.LIBRARIES`: Orbax) where it is not installed; where
scripts/test.sh installed it (PW_REQUIRE_CHECKPOINT_LIBS) it fails instead. A
server that does not speak the proxy protocol, or missing binaries, fail
these tests. Once the first snippet (`devices`, which
only asks for jax.devices()) fails under the proxy, the other proxy tests
fail at once with its message instead of waiting out each their own.

One snippet, both halves, or one half:

    pytest frontend/python/tests/test_proxy.py -k mlp_descent      # both halves
    pytest frontend/python/tests/test_proxy.py -k in_process       # no server
    pytest 'frontend/python/tests/test_proxy.py::test_proxy[two_mesh_pipeline]'

By hand: `python frontend/python/tests/proxy_snippets.py NAME OUT.npz` with
either environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import proxy_snippets
from pw._local import LocalServer

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxy_snippets.py")
NAMES = list(proxy_snippets.SNIPPETS)
FIRST = NAMES[0]  # "devices": whether the proxy works at all

# Each snippet takes seconds; a process that takes this long is stuck.
SUBPROCESS_TIMEOUT_S = 120
# The proxy client's connection attempt (the server is up and local).
CONNECT_TIMEOUT_S = 20
DEVICES_PER_WORKER = 2
DEVICES = 2 * DEVICES_PER_WORKER

# Default float32 tolerances, and those of bfloat16 results.
RTOL, ATOL = 1e-6, 1e-7
BF16_RTOL, BF16_ATOL = 1e-2, 1e-2
LOG_TAIL = 3000

# What the environment says about JAX's platform is ours to set.
_SCRUB = (
    "JAX_PLATFORMS",
    "JAX_PLATFORM_NAME",
    "JAX_BACKEND_TARGET",
    "XLA_FLAGS",
    "JAX_ENABLE_X64",
    "PW_PROXY_CONNECT_TIMEOUT_S",
    "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS",
)


class SnippetFailed(AssertionError):
    """A snippet's process failed; `summary` is its last error line."""

    def __init__(self, message: str, summary: str):
        super().__init__(message)
        self.summary = summary


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# glog's prefix (severity, date, time, thread): lines equal but for it are
# one line repeated (the proxy client logs each connection attempt).
_GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ ")


def _tidy(text: str) -> str:
    """`text` without colour codes, runs of repeated log lines collapsed."""
    out, last, count = [], None, 0
    for line in _ANSI.sub("", text).splitlines():
        key = _GLOG.sub("", line) if _GLOG.match(line) else None
        if key is not None and key == last:
            count += 1
            continue
        if count:
            out.append(f"    (and {count} more like it)")
        out.append(line)
        last, count = key, 0
    if count:
        out.append(f"    (and {count} more like it)")
    return "\n".join(out)


def _summary(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "(no stderr)"


def _environ(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env.update(extra)
    return env


def in_process_env() -> dict:
    return _environ(JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={DEVICES}")


def proxy_env(address: str) -> dict:
    return _environ(
        JAX_PLATFORMS="proxy",
        JAX_BACKEND_TARGET=f"grpc://{address}",
        PW_PROXY_CONNECT_TIMEOUT_S=str(CONNECT_TIMEOUT_S),
    )


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def run_snippet(name: str, env: dict, out_dir: str, what: str, logs=None) -> dict:
    """Runs one snippet in a fresh process; its result, or a SnippetFailed
    with the process's stderr (and the server's logs, if given)."""
    path = os.path.join(out_dir, f"{name}.{what}.npz")
    if os.path.exists(path):
        os.remove(path)
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, RUNNER, name, path],
            env=env,
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as e:
        stderr = _tidy(_text(e.stderr))
        raise SnippetFailed(
            f"snippet {name} ({what}) did not finish within {SUBPROCESS_TIMEOUT_S} s\n"
            f"--- stderr ---\n{stderr[-LOG_TAIL * 2 :]}\n--- stdout ---\n{_text(e.stdout)[-LOG_TAIL:]}"
            f"{_log_tails(logs)}",
            f"timed out after {SUBPROCESS_TIMEOUT_S} s; last stderr line: {_summary(stderr)}",
        ) from None
    if proc.returncode != 0 or not os.path.exists(path):
        stderr = _tidy(proc.stderr)
        raise SnippetFailed(
            f"snippet {name} ({what}) failed: exit {proc.returncode} after {time.monotonic() - start:.1f} s\n"
            f"--- stderr ---\n{stderr[-LOG_TAIL * 2 :]}\n--- stdout ---\n{proc.stdout[-LOG_TAIL:]}"
            f"{_log_tails(logs)}",
            _summary(stderr),
        )
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _log_tails(logs) -> str:
    if not logs:
        return ""
    parts = []
    for path in logs:
        try:
            with open(path, errors="replace") as f:
                tail = _tidy(f.read())[-LOG_TAIL:]
        except OSError as e:
            tail = f"(unreadable: {e})"
        parts.append(f"\n--- {os.path.basename(path)} (tail) ---\n{tail}")
    return "".join(parts)


def assert_same(name: str, want: dict, got: dict) -> None:
    """The proxy's result `got` matches the in-process `want`."""
    assert sorted(got) == sorted(want), f"{name}: keys {sorted(got)} under the proxy, {sorted(want)} in-process"
    tolerances = proxy_snippets.TOLERANCES.get(name, {})
    problems = []
    for key in sorted(want):
        w, g = want[key], got[key]
        label = f"{name}[{key!r}]"
        try:
            if w.dtype.kind == "U":
                assert g.dtype.kind == "U", f"{label}: dtype {g.dtype}, want a string"
                np.testing.assert_array_equal(g, w, err_msg=label)
                continue
            assert g.dtype == w.dtype, f"{label}: dtype {g.dtype}, want {w.dtype}"
            assert g.shape == w.shape, f"{label}: shape {g.shape}, want {w.shape}"
            if w.dtype.kind in "fc":
                if key.endswith("_bf16"):
                    rtol, atol = BF16_RTOL, BF16_ATOL
                else:
                    rtol, atol = tolerances.get("rtol", RTOL), tolerances.get("atol", ATOL)
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=label)
            else:
                np.testing.assert_array_equal(g, w, err_msg=label)
        except AssertionError as e:
            problems.append(str(e))
    assert not problems, "\n\n".join(problems)


# -- the server ---------------------------------------------------------------


class ProxyServer:
    """One pw-server with two pw-workers of 2 devices each."""

    def __init__(self):
        # Every session's trace goes here when it closes.
        self.traces = tempfile.mkdtemp(prefix="pw-proxy-traces-")
        # Both workers run sessions' colocated Python in sidecars of this
        # interpreter (the venv's): LocalServer's worker has one.
        self.local = LocalServer(DEVICES_PER_WORKER, server_args=["--trace-sessions", self.traces])
        self.address = self.local.address
        self.second = None

    def start_second(self):
        self.second = self.local.add_worker()

    def workers(self) -> int:
        import grpc

        from pw._proto import pb

        with grpc.insecure_channel(self.address) as channel:
            status = channel.unary_unary(
                "/pw.v1.Controller/Status",
                request_serializer=pb.StatusRequest.SerializeToString,
                response_deserializer=pb.StatusReply.FromString,
            )
            return len(status(pb.StatusRequest(), timeout=5).workers)

    def logs(self) -> list:
        return [
            os.path.join(self.local.logs, "pw-server.log"),
            *self.local.worker_logs,
        ]

    def stop(self):
        try:
            self.local.stop()
        finally:
            shutil.rmtree(self.traces, ignore_errors=True)


@pytest.fixture(scope="module")
def proxy_server():
    server = ProxyServer()
    try:
        server.start_second()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("proxy-snippets"))


# Results already computed in this run, by (half, name): a result dict or
# the SnippetFailed it raised.
_RESULTS: dict = {}


def _cached(key, compute):
    if key not in _RESULTS:
        try:
            _RESULTS[key] = compute()
        except SnippetFailed as e:
            _RESULTS[key] = e
    value = _RESULTS[key]
    if isinstance(value, SnippetFailed):
        raise value
    return value


def reference(name: str, out_dir: str) -> dict:
    return _cached(("in_process", name), lambda: run_snippet(name, in_process_env(), out_dir, "in_process"))


def under_proxy(name: str, server: ProxyServer, out_dir: str) -> dict:
    return _cached(
        ("proxy", name),
        lambda: run_snippet(name, proxy_env(server.address), out_dir, "proxy", logs=server.logs()),
    )


def _require_working_proxy(name: str) -> None:
    """Fails at once if the first snippet already failed under the proxy."""
    first = _RESULTS.get(("proxy", FIRST))
    if name != FIRST and isinstance(first, SnippetFailed):
        pytest.fail(
            f"the proxy does not work: the first snippet ({FIRST}) failed under it "
            f"(details in test_proxy[{FIRST}]): {first.summary}",
            pytrace=False,
        )


def _get(fetch, prefix: str = "") -> dict:
    """fetch(), or the test fails with its SnippetFailed's message."""
    try:
        return fetch()
    except SnippetFailed as e:
        failure = e
    pytest.fail(prefix + str(failure), pytrace=False)


# -- the tests ----------------------------------------------------------------


def _library(name: str) -> None:
    """Skips a snippet whose library is missing, unless the test command
    installed it (PW_REQUIRE_CHECKPOINT_LIBS)."""
    module = proxy_snippets.LIBRARIES.get(name)
    if module and not os.environ.get("PW_REQUIRE_CHECKPOINT_LIBS"):
        pytest.importorskip(module)


@pytest.mark.parametrize("name", NAMES)
def test_in_process(name, results_dir):
    """The snippet itself runs in-process (the reference exists)."""
    _library(name)
    assert _get(lambda: reference(name, results_dir))


@pytest.mark.parametrize("name", NAMES)
def test_proxy(name, proxy_server, results_dir):
    """The snippet under the proxy gives the in-process result."""
    _library(name)
    want = _get(lambda: reference(name, results_dir), "no in-process reference: ")
    _require_working_proxy(name)
    got = _get(lambda: under_proxy(name, proxy_server, results_dir))
    assert_same(name, want, got)


def test_the_proxy_shows_four_cpu_devices(proxy_server, results_dir):
    """jax.devices() under the proxy: both workers' devices, 4 in all, of
    the CPU platform, in one process."""
    got = _get(lambda: under_proxy(FIRST, proxy_server, results_dir))
    assert int(got["n_devices"]) == DEVICES, got
    assert int(got["device_count"]) == DEVICES, got
    assert int(got["distinct_ids"]) == DEVICES, got
    assert str(got["platform"]) == "cpu", got
    assert int(got["process_count"]) == 1, got


def _new_trace(server: ProxyServer, before: set) -> dict:
    """The trace of the one session that closed since `before` was listed
    (the server writes it as the session closes, just after its client
    exits)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        new = set(os.listdir(server.traces)) - before
        new = {f for f in new if f.endswith(".json")}
        if new:
            assert len(new) == 1, new
            with open(os.path.join(server.traces, new.pop())) as f:
                return json.load(f)
        time.sleep(0.05)
    raise AssertionError(f"no session trace appeared in {server.traces}" + _log_tails(server.logs()))


def test_the_pipeline_stages_overlap_in_the_trace(proxy_server, results_dir):
    """pipelined_microbatches under the proxy: Execute returns at once, so
    stage B (devices 2-3, the second worker) of one microbatch runs while
    stage A (devices 0-1) works on a later one; the session's trace
    (pw-server --trace-sessions) shows device spans of both overlapping."""
    before = set(os.listdir(proxy_server.traces))
    _get(lambda: run_snippet("pipelined_microbatches", proxy_env(proxy_server.address), results_dir, "traced", logs=proxy_server.logs()))
    trace = _new_trace(proxy_server, before)
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "execute"]
    a = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["tid"] in (0, 1)]
    b = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["tid"] in (2, 3)]
    assert len(a) >= 16 and len(b) >= 16, (len(a), len(b))
    overlap = sum(max(0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)
    assert overlap > 0, "no span of stage A overlaps one of stage B"


def test_a_server_error_is_a_jax_exception_and_the_session_goes_on(proxy_server, results_dir):
    """Something pw cannot do (a program spanning workers) raises JAX's exception
    with the server's message; later work in the session succeeds, and the
    status page lists the proxy session."""
    got = _get(lambda: run_snippet("server_error_then_recover", proxy_env(proxy_server.address), results_dir, "proxy_only", logs=proxy_server.logs()))
    assert bool(got["raised"]), got
    assert str(got["type"]) == "JaxRuntimeError", got
    assert "one worker's devices" in str(got["message"]), got
    np.testing.assert_array_equal(got["after"], np.arange(1, 5, dtype=np.int32))
    sessions = json.loads(str(got["sessions"]))
    assert any("IFRT proxy client" in s.get("name", "") for s in sessions), sessions


def _ended(pid: int, timeout: float) -> bool:
    """Whether process `pid` is gone (or a zombie) within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_colocated_python_failures_are_clear_and_recovered(proxy_server, results_dir):
    """An exception in a colocated function raises JAX's exception with the
    traceback; a sidecar that exits fails that call, the next call runs in
    a new sidecar where the colocated object is made again from its
    constructor's arguments; the sidecars end with the session."""
    got = _get(lambda: run_snippet("colocated_failures", proxy_env(proxy_server.address), results_dir, "proxy_only", logs=proxy_server.logs()))
    assert bool(got["raised"]), got
    assert str(got["type"]) == "JaxRuntimeError", got
    message = str(got["message"])
    assert "Traceback (most recent call last)" in message and "ValueError: boom from the sidecar" in message, message
    np.testing.assert_array_equal(got["before"], [101, 102])
    assert bool(got["died_raised"]), got
    assert "the sidecar exited while running dies" in str(got["died_message"]), got
    np.testing.assert_array_equal(got["after"], [101, 102])
    before, after = int(got["pid_before"]), int(got["pid_after"])
    assert before != after, (before, after)
    assert _ended(before, 10), f"the first sidecar ({before}) is still running"
    # The session closed as its client exited: its sidecar goes with it.
    assert _ended(after, 20), f"the session's sidecar ({after}) outlived its session" + _log_tails(proxy_server.logs())


def test_donating_an_assembly_deletes_its_parts(proxy_server, results_dir):
    """The parts of an array assembled with REUSE_INPUT go with it when it
    is donated: a later use of one is refused, not computed."""
    got = _get(lambda: run_snippet("donated_assembly", proxy_env(proxy_server.address), results_dir, "proxy_only", logs=proxy_server.logs()))
    np.testing.assert_array_equal(got["out"], np.arange(16) * 2)
    assert "sum_after" not in got, got
    assert "has been deleted" in str(got["error"]), got


def test_donating_a_remap_deletes_what_it_reused(proxy_server, results_dir):
    """An array reordered by a remap that reuses its buffers goes with the
    reordered one when that is donated: a later use is refused."""
    got = _get(lambda: run_snippet("donated_remap", proxy_env(proxy_server.address), results_dir, "proxy_only", logs=proxy_server.logs()))
    np.testing.assert_array_equal(got["out"], np.arange(16))
    assert "sum_after" not in got, got
    assert "has been deleted" in str(got["error"]) or "donated" in str(got["error"]), got


def test_a_program_across_workers_is_refused_with_the_reason(proxy_server, results_dir):
    """A computation over devices of both workers cannot run on the CPU
    plugin (its collectives do not reach another process): JAX's
    exception says so and where the design is; the session goes on."""
    got = _get(lambda: run_snippet("program_across_workers", proxy_env(proxy_server.address), results_dir, "proxy_only", logs=proxy_server.logs()))
    assert "sum" not in got, got
    error = str(got["error"])
    assert error.startswith("JaxRuntimeError") and "span workers" in error, error
    assert "Computations that span hosts" in error, error
    np.testing.assert_array_equal(got["after"], np.arange(4) * 2)


def test_a_moved_custom_layout_is_refused_not_misread(proxy_server, results_dir):
    """A column-major array copied to the other worker is in the default
    layout there; a program that takes it column-major is refused with a
    message that says so, and works once the array is laid out again."""
    got = _get(lambda: run_snippet("moved_custom_layout", proxy_env(proxy_server.address), results_dir, "proxy_only", logs=proxy_server.logs()))
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    np.testing.assert_array_equal(got["moved"], x * 2)
    assert "taken" not in got, got
    assert "JaxRuntimeError" in str(got["error"]) and "the program takes layout {0,1}" in str(got["error"]), got
    np.testing.assert_array_equal(got["again"], x * 2 + 1)


def test_a_session_can_ask_for_fewer_devices(proxy_server, results_dir):
    """PW_PROXY_DEVICES=2: the session holds 2 of the 4 devices; a bad
    value is the plugin's clear error."""
    env = dict(proxy_env(proxy_server.address), PW_PROXY_DEVICES="2")
    got = _get(lambda: run_snippet(FIRST, env, results_dir, "two_devices", logs=proxy_server.logs()))
    assert int(got["n_devices"]) == 2, got
    env["PW_PROXY_DEVICES"] = "none"
    with pytest.raises(SnippetFailed, match="PW_PROXY_DEVICES='none' must be a whole number of devices"):
        run_snippet(FIRST, env, results_dir, "bad_devices")



# Under the proxy: a 64 MiB array on the second worker and a small one on
# the first; waits for a line, then fetches the large one (argv[1] ==
# "fetch") or uploads another to the second worker ("upload"), reports how
# that went, and fetches the small one.
_LOSE_A_WORKER_MID_TRANSFER = r"""
import sys
import numpy as np
import jax

x = np.arange(16 << 20, dtype=np.float32)
far = jax.device_put(x, jax.devices()[2])
near = jax.device_put(x[:8], jax.devices()[0])
far.block_until_ready()
near.block_until_ready()
print("ready", flush=True)
sys.stdin.readline()
try:
    if sys.argv[1] == "fetch":
        np.asarray(far)
    else:
        jax.device_put(x + 1, jax.devices()[2]).block_until_ready()
    print("done", flush=True)
except Exception as e:
    print("error", type(e).__name__, " ".join(str(e).split()), flush=True)
print("near", float(np.asarray(near).sum()), flush=True)
"""


def _unaccepted_connections(pid: int) -> int:
    """How many TCP connections to the ports process `pid` listens on wait
    in its accept queue (established, not yet taken: no file, inode 0)."""
    owned = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            owned.add(link[len("socket:[") : -1])
    rows = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            rows += [line.split() for line in f.readlines()[1:]]
    listening = {r[1].rsplit(":", 1)[1] for r in rows if r[3] == "0A" and r[9] in owned}
    return sum(1 for r in rows if r[3] == "01" and r[9] == "0" and r[1].rsplit(":", 1)[1] in listening)


def _wait_unaccepted_connection(pid: int, timeout: float):
    """Waits (at most `timeout` seconds) until a connection to `pid` waits
    in its accept queue: a client's transfer with a stopped process."""
    deadline = time.monotonic() + timeout
    while _unaccepted_connections(pid) == 0:
        if time.monotonic() > deadline:
            raise AssertionError(f"no connection to process {pid} within {timeout} s")
        time.sleep(0.02)


def _line(proc, timeout: float) -> str:
    """The next line `proc` writes, within `timeout` seconds."""
    import select

    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise AssertionError(f"no line within {timeout} s")
    return proc.stdout.readline().strip()


@pytest.mark.parametrize("transfer", ["fetch", "upload"])
def test_a_worker_lost_during_a_large_transfer_fails_that_transfer_not_the_session(transfer):
    """Large fetches and uploads go straight to the worker's data port,
    streamed: the worker is stopped while the client transfers, then
    killed. The transfer fails with JAX's exception naming it (no hang, no
    partial array), and an array on the other worker is still fetched."""
    server = ProxyServer()
    proc = None
    try:
        server.start_second()
        proc = subprocess.Popen(
            [sys.executable, "-c", _LOSE_A_WORKER_MID_TRANSFER, transfer],
            env=proxy_env(server.address),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert _line(proc, SUBPROCESS_TIMEOUT_S) == "ready"
        server.second.send_signal(signal.SIGSTOP)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        # The transfer is under way (its connection waits, unaccepted, on the
        # stopped worker's data port) ...
        _wait_unaccepted_connection(server.second.pid, SUBPROCESS_TIMEOUT_S)
        # ... when the worker dies.
        server.second.kill()
        server.second.wait(10)
        outcome = _line(proc, SUBPROCESS_TIMEOUT_S)
        assert outcome.startswith("error JaxRuntimeError") and "direct transfer" in outcome, outcome
        near = float(np.arange(8, dtype=np.float32).sum())
        assert _line(proc, SUBPROCESS_TIMEOUT_S) == f"near {near}"
        assert proc.wait(SUBPROCESS_TIMEOUT_S) == 0
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        server.stop()

def test_comparisons_catch_differences():
    """assert_same itself: exact for ints and strings, tolerant for floats,
    loose for bfloat16 keys, and strict about keys, dtypes and shapes."""
    want = {
        "i": np.array([1, 2], np.int32),
        "f": np.array([1.0, 2.0], np.float32),
        "x_bf16": np.array([1.0], np.float32),
        "s": np.array("RuntimeError"),
        "b": np.array(True),
    }
    near = dict(want, f=want["f"] * (1 + 1e-7), x_bf16=np.array([1.005], np.float32))
    assert_same("t", want, near)
    for bad in (
        dict(want, i=np.array([1, 3], np.int32)),
        dict(want, i=want["i"].astype(np.int64)),
        dict(want, f=want["f"] * (1 + 1e-4)),
        dict(want, f=want["f"][:1]),
        dict(want, x_bf16=np.array([1.1], np.float32)),
        dict(want, s=np.array("XlaRuntimeError")),
        dict(want, b=np.array(False)),
        {k: v for k, v in want.items() if k != "b"},
    ):
        with pytest.raises(AssertionError):
            assert_same("t", want, bad)
