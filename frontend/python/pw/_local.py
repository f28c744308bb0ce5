"""A local pw-server with one pw-worker on the local CPU plugin, started the
first time ``pw.connect()`` needs one and stopped when the process exits
(also if it is killed: the server stops when this process is gone, and its
worker once it loses the server).

May import errors, tools and _proto: not the client or the program."""

from __future__ import annotations

import atexit
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

from .errors import ServerError
from .tools import find_tool

# How many CPU devices the local worker offers unless asked for more
# ($PW_LOCAL_DEVICES overrides).
DEFAULT_DEVICES = 8
START_TIMEOUT_S = 60.0

_LOCK = threading.Lock()
_SERVER = None  # the LocalServer


def _env() -> dict:
    env = dict(os.environ)
    if "PW_PJRT_PLUGIN" not in env and "PW_VENV" not in env and sys.prefix != sys.base_prefix:
        env["PW_VENV"] = sys.prefix
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.pop("PW_TOKEN", None)
    return env


def _first_line(proc: subprocess.Popen, prefix: str, what: str, log: str) -> str:
    """The first stdout line of `proc` starting with `prefix` (bounded)."""
    lines: queue.Queue = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        if line is None:
            break
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    _stop(proc)
    with open(log) as f:
        detail = f.read()[-4000:]
    raise ServerError(f"the local {what} did not start within {START_TIMEOUT_S:.0f} s:\n{detail}")


def _stop(proc: subprocess.Popen):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class LocalServer:
    """A pw-server and one pw-worker on 127.0.0.1, started now;
    ``add_worker()`` starts more, ``stop()`` ends them all (by PID).
    ``server_args`` go to pw-server, ``worker_args`` to every pw-worker.
    Each worker runs Python steps and colocated Python in sidecars of this
    interpreter."""

    def __init__(self, devices: int, server_args=(), worker_args=()):
        self.devices = devices
        self.worker_args = list(worker_args)
        self.logs = tempfile.mkdtemp(prefix="pw-local-")
        self.workers: list[subprocess.Popen] = []
        self.worker_logs: list[str] = []
        self.server_args = list(server_args)
        self.server_log = os.path.join(self.logs, "pw-server.log")
        self._start_server("127.0.0.1:0")
        self.add_worker()

    def _start_server(self, listen: str):
        with open(self.server_log, "a") as log:
            self.server = subprocess.Popen(
                [find_tool("pw-server"), "--listen", listen, "--exit-with", str(os.getpid()), *self.server_args],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=_env(),
            )
        self.address = _first_line(self.server, "pw-server: listening on ", "pw-server", self.server_log)

    def restart_server(self, kill: bool = True):
        """Ends the pw-server (SIGKILL, or SIGTERM when not ``kill``) and
        starts another at the same address with the same arguments (its
        workers register with it again)."""
        if kill:
            self.server.kill()
            self.server.wait(5)
        else:
            _stop(self.server)
        if self.server.stdout is not None:
            self.server.stdout.close()
        self._start_server(self.address)

    @property
    def worker(self) -> subprocess.Popen:
        """The first worker."""
        return self.workers[0]

    def add_worker(self, devices: int | None = None) -> subprocess.Popen:
        """Starts one more pw-worker (of ``devices``, default the first's)
        and waits until the server has it; a ServerError, with everything
        stopped, if it does not register in time."""
        n = len(self.workers) + 1
        log = os.path.join(self.logs, "pw-worker.log" if n == 1 else f"pw-worker-{n}.log")
        with open(log, "w") as log_file:
            worker = subprocess.Popen(
                [
                    find_tool("pw-worker"),
                    "--controller",
                    self.address,
                    "--devices",
                    str(devices or self.devices),
                    "--listen",
                    "127.0.0.1:0",
                    "--connect-timeout",
                    "5",
                    "--sidecar-python",
                    sys.executable,
                    *self.worker_args,
                ],
                stdout=subprocess.DEVNULL,
                stderr=log_file,
                env=_env(),
            )
        self.workers.append(worker)
        self.worker_logs.append(log)
        try:
            _wait_registered(self.address, worker, n, log)
        except ServerError:
            self.stop()
            raise
        return worker

    def alive(self) -> bool:
        return self.server.poll() is None and all(w.poll() is None for w in self.workers)

    def stop(self):
        for worker in self.workers:
            _stop(worker)
        _stop(self.server)


def _wait_registered(address, worker, count, log):
    """Waits until the server at `address` has `count` workers; a
    ServerError if `worker` exits or the time runs out first."""
    import grpc

    from ._proto import pb

    channel = grpc.insecure_channel(address)
    status = channel.unary_unary(
        "/pw.v1.Controller/Status",
        request_serializer=pb.StatusRequest.SerializeToString,
        response_deserializer=pb.StatusReply.FromString,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if worker.poll() is not None:
                break
            try:
                if len(status(pb.StatusRequest(), timeout=2).workers) >= count:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    finally:
        channel.close()
    with open(log) as f:
        detail = f.read()[-4000:]
    raise ServerError(f"the local pw-worker did not register within {START_TIMEOUT_S:.0f} s:\n{detail}")


def address(devices: int | None) -> str:
    """The local server's address, started with at least `devices`."""
    global _SERVER
    with _LOCK:
        if _SERVER is not None and not _SERVER.alive():
            stop()
        if _SERVER is None:
            want = int(os.environ.get("PW_LOCAL_DEVICES", DEFAULT_DEVICES))
            # A local server's checkpoints (client.save) go where the
            # program runs, as np.save's files do.
            checkpoints = os.environ.get("PW_CHECKPOINT_DIR") or os.getcwd()
            _SERVER = LocalServer(max(want, int(devices or 0)), server_args=["--checkpoint-dir", checkpoints])
        elif devices and devices > _SERVER.devices:
            raise ServerError(
                f"the local pw-server of this process has {_SERVER.devices} devices, {devices} asked for "
                f"(set PW_LOCAL_DEVICES before the first pw.connect)"
            )
        return _SERVER.address


@atexit.register
def stop():
    """Stops the local server and worker (at exit)."""
    global _SERVER
    if _SERVER is not None:
        server, _SERVER = _SERVER, None
        server.stop()
