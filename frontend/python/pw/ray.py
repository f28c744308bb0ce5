"""pw-workers on a Ray cluster: one per Ray node, pointed at a pw-server.

pw does not manage machines; where a team runs Ray, Ray places and restarts
the workers::

    import ray
    import pw
    import pw.ray

    ray.init(address="auto")
    with pw.ray.launch_workers("10.0.0.5:29000", devices_per_worker=8, token=token, cluster_secret=secret) as workers:
        workers.wait_registered()
        with pw.connect("10.0.0.5:29000", token=token):
            outputs = p.run(*inputs)

``launch_workers`` makes one placement group with a bundle per node
(``STRICT_SPREAD``: no two on one node) and one actor in each bundle. The
actor runs ``pw-worker`` as a child process, listening on its node's Ray
address, and watches it: when the process dies (killed, crashed, or gone
after losing the server for its ``--connect-timeout``), the actor exits, Ray
restarts it (``max_restarts``) and the new actor starts a new pw-worker,
which registers with the server again as a new worker. ``stop()`` ends every
pw-worker (by PID), the actors and the placement group.

The pw-worker is also ended if its actor's process dies without stopping it
(``PR_SET_PDEATHSIG``, Linux), so none is left registered behind a dead
actor. Ray is imported only here, when called: ``pip install ray`` where
this is used. See docs/deploy.md.

May import errors, tools, _channel and _proto (and Ray, inside the functions that
need it): not the client, the program or JAX.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .errors import PwError

__all__ = ["LaunchError", "Workers", "launch_workers", "registered_workers"]

# pw-worker prints this once it serves.
_LISTENING = "pw-worker: listening on "
# pw-worker's exit code when the server refused it (wrong plugin or
# protocol): starting it again cannot help.
_REFUSED = 2
PLATFORMS = ("cpu", "cuda", "tpu")


class LaunchError(PwError):
    """The workers could not be started, or did not register in time."""


def _ray():
    try:
        import ray
    except ImportError as e:
        raise LaunchError(
            "pw.ray needs Ray: install it (pip install ray) in the environment of the driver and of every Ray node"
        ) from e
    return ray


def registered_workers(controller: str, token: str | None = None, timeout: float = 5.0) -> list:
    """The workers the pw-server at ``controller`` lists now (its
    ``Status`` RPC): each with ``worker`` (id), ``address``, ``host``,
    ``pid`` and ``device_ids``."""
    from ._channel import channel as open_channel
    from ._proto import pb

    metadata = (("x-pw-token", token),) if token else ()
    with open_channel(controller) as channel:
        status = channel.unary_unary(
            "/pw.v1.Controller/Status",
            request_serializer=pb.StatusRequest.SerializeToString,
            response_deserializer=pb.StatusReply.FromString,
        )
        return list(status(pb.StatusRequest(), timeout=timeout, metadata=metadata).workers)


def _die_with_parent(parent: int):
    """In the child, before exec: be killed when the thread that started us
    ends (its process dies), and give up if that already happened."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except Exception:
            pass
    if os.getppid() != parent:
        os._exit(1)


class _Host:
    """The Ray actor that runs one pw-worker (made remote in
    ``launch_workers``). If the pw-worker dies while the actor does not
    stop it, the actor's process exits, so that Ray restarts the actor and
    with it a new pw-worker."""

    def __init__(self, command: list, env: dict, listen_host: str | None, start_timeout: float):
        import ray

        if command[0] is None:
            from .tools import find_tool

            command = [find_tool("pw-worker"), *command[1:]]
        self._stopping = False
        self._exit_code = None
        self._address = None
        self._node_ip = ray.util.get_node_ip_address()
        host = listen_host or self._node_ip
        fd, self._log = tempfile.mkstemp(prefix="pw-worker-", suffix=".log")
        os.close(fd)
        full = [*command, "--listen", f"{host}:0"]
        child_env = dict(os.environ)
        child_env.update(env)
        child_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        self._started = threading.Event()
        self._proc = None
        # The supervising thread starts the process and lives as long as it:
        # PR_SET_PDEATHSIG fires when the thread that forked ends.
        self._thread = threading.Thread(target=self._supervise, args=(full, child_env), daemon=True)
        self._thread.start()
        if not self._started.wait(start_timeout) or self._address is None:
            self._stopping = True
            self._kill()
            if self._exit_code is not None:
                why = f"exited with code {self._exit_code} before it served"
            else:
                why = f"did not start within {start_timeout:.0f} s"
            raise LaunchError(f"pw-worker on {self._node_ip} {why}:\n{self.log_tail()}")

    def _supervise(self, command, env):
        try:
            log = open(self._log, "w")
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                text=True,
                preexec_fn=lambda parent=os.getpid(): _die_with_parent(parent),
            )
        except OSError as e:
            with open(self._log, "a") as f:
                f.write(f"cannot start {command[0]}: {e}\n")
            self._exit_code = -1
            self._started.set()
            return
        self._proc = proc
        for line in proc.stdout:
            if line.startswith(_LISTENING) and self._address is None:
                self._address = line[len(_LISTENING) :].strip()
                self._started.set()
        code = proc.wait()
        self._exit_code = code
        self._started.set()
        if not self._stopping and self._address is not None and code != _REFUSED:
            # The worker died under us: end this actor so that Ray restarts
            # it, and a new pw-worker registers.
            os._exit(1)

    def _kill(self, grace: float = 10.0):
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(grace)
        except ProcessLookupError:
            pass

    def info(self) -> dict:
        """The pw-worker: ``pid``, ``address``, ``node_ip``, ``alive``,
        ``exit_code`` (once it ended)."""
        proc = self._proc
        return {
            "pid": proc.pid if proc is not None else None,
            "address": self._address,
            "node_ip": self._node_ip,
            "alive": proc is not None and proc.poll() is None,
            "exit_code": self._exit_code,
        }

    def pid(self):
        return self._proc.pid if self._proc is not None else None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            with open(self._log) as f:
                return f.read()[-chars:]
        except OSError:
            return ""

    def stop(self, grace: float = 10.0):
        """Ends the pw-worker (SIGTERM, then SIGKILL after ``grace``), by
        PID; returns its exit code."""
        self._stopping = True
        self._kill(grace)
        if self._proc is not None:
            self._exit_code = self._proc.poll()
        return self._exit_code


class Workers:
    """pw-workers launched on Ray by ``launch_workers``: one actor each, in
    one placement group. ``stop()`` (or leaving the ``with`` block) ends
    them."""

    def __init__(self, controller: str, token: str | None, placement_group, actors: list):
        self.controller = controller
        self.placement_group = placement_group
        self.actors = actors
        self._token = token
        self._stopped = False

    def __len__(self):
        return len(self.actors)

    def info(self, timeout: float = 10.0) -> list:
        """Each actor's ``_Host.info()``; None for one that does not answer
        now (it is being restarted)."""
        ray = _ray()
        out = []
        for actor in self.actors:
            try:
                out.append(ray.get(actor.info.remote(), timeout=timeout))
            except Exception:
                out.append(None)
        return out

    def pids(self, timeout: float = 10.0) -> list:
        """The PID of each pw-worker (None while its actor restarts)."""
        return [i["pid"] if i else None for i in self.info(timeout)]

    def logs(self, timeout: float = 10.0) -> list[str]:
        """The end of each pw-worker's log."""
        ray = _ray()
        out = []
        for actor in self.actors:
            try:
                out.append(ray.get(actor.log_tail.remote(), timeout=timeout))
            except Exception as e:
                out.append(f"<not answering: {e}>")
        return out

    def wait_registered(self, timeout: float = 60.0) -> list:
        """Waits, at most ``timeout`` seconds, until the server lists every
        pw-worker now running (by address); returns the server's entries for
        them. Raises LaunchError saying which are missing, with their logs."""
        deadline = time.monotonic() + timeout
        infos, listed = [], {}
        while True:
            infos = self.info()
            try:
                listed = {w.address: w for w in registered_workers(self.controller, self._token)}
            except Exception:
                listed = {}
            addresses = [i["address"] if i and i["alive"] else None for i in infos]
            if all(a is not None and a in listed for a in addresses):
                return [listed[a] for a in addresses]
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        logs = "\n".join(f"-- worker {k}: {i}\n{log}" for k, (i, log) in enumerate(zip(infos, self.logs())))
        raise LaunchError(
            f"not every pw-worker registered with {self.controller} within {timeout:.0f} s "
            f"(the server lists {sorted(listed)}):\n{logs}"
        )

    def stop(self, timeout: float = 30.0) -> None:
        """Ends every pw-worker (by PID, in its actor), then the actors
        (without restarts) and the placement group."""
        if self._stopped:
            return
        self._stopped = True
        ray = _ray()
        from ray.util.placement_group import remove_placement_group

        pending = [actor.stop.remote() for actor in self.actors]
        for ref in pending:
            try:
                ray.get(ref, timeout=timeout)
            except Exception:
                # An actor being restarted: killing it ends its pw-worker
                # (PR_SET_PDEATHSIG).
                pass
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                pass
        try:
            remove_placement_group(self.placement_group)
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def launch_workers(
    controller: str,
    devices_per_worker: int | None = None,
    *,
    nodes: int | None = None,
    platform: str = "cpu",
    plugin: str | None = None,
    token: str | None = None,
    cluster_secret: str | None = None,
    max_restarts: int = -1,
    num_cpus: float = 1,
    listen_host: str | None = None,
    connect_timeout: float | None = None,
    worker_args=(),
    env: dict | None = None,
    binary: str | None = None,
    start_timeout: float = 120.0,
) -> Workers:
    """Starts one pw-worker per Ray node, registered with the pw-server at
    ``controller`` (``host:port``); returns the ``Workers``. Call it from
    a driver connected to the Ray cluster (``ray.init``).

    - ``devices_per_worker``: CPU devices each worker asks its plugin for
      (``platform="cpu"``), or the GPUs / TPU chips each worker's bundle
      reserves (``"cuda"``, ``"tpu"``: Ray's ``GPU`` / ``TPU`` resources).
    - ``nodes``: how many workers (default: every live Ray node); one
      bundle each, no two on one node.
    - ``plugin``: the PJRT plugin's path on the nodes (default: pw-worker's
      own, ``$PW_PJRT_PLUGIN`` or the recorded one).
    - ``token`` (default ``$PW_TOKEN``): the server's ``--token``, which
      the driver presents to ask the server which workers registered.
    - ``cluster_secret`` (default ``$PW_CLUSTER_SECRET``): the secret the
      server and its workers share, given to each pw-worker as
      ``PW_CLUSTER_SECRET`` (it travels to the nodes as an argument of the
      actors, inside the Ray cluster); needed when the server has one.
    - ``max_restarts``: how often Ray restarts an actor whose pw-worker
      died (-1: always).
    - ``listen_host``: where pw-worker listens (default: the node's Ray
      address, which the server and the other workers must reach).
    - ``connect_timeout``, ``worker_args``: pw-worker's ``--connect-timeout``
      and more of its flags; ``env``: more environment; ``binary``: the
      pw-worker on the nodes (default: ``pw.tools.find_tool`` there).
    """
    ray = _ray()
    from ray.util.placement_group import placement_group, remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    if platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {', '.join(PLATFORMS)}, not {platform!r}")
    if devices_per_worker is not None and int(devices_per_worker) < 1:
        raise ValueError(f"devices_per_worker must be at least 1, not {devices_per_worker}")
    if platform != "cpu" and devices_per_worker is None:
        raise ValueError(f"platform={platform!r} needs devices_per_worker (the devices each bundle reserves)")
    if nodes is None:
        nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    if int(nodes) < 1:
        raise ValueError(f"nodes must be at least 1, not {nodes}")
    if token is None:
        token = os.environ.get("PW_TOKEN") or None
    if cluster_secret is None:
        cluster_secret = os.environ.get("PW_CLUSTER_SECRET") or None

    # binary None: pw.tools.find_tool, run in the actor, on its node.
    command = [binary, "--controller", controller]
    if platform == "cpu" and devices_per_worker is not None:
        command += ["--devices", str(int(devices_per_worker))]
    if plugin is not None:
        command += ["--plugin", str(plugin)]
    if connect_timeout is not None:
        command += ["--connect-timeout", str(int(connect_timeout))]
    command += [str(a) for a in worker_args]
    child_env = dict(env or {})
    if cluster_secret:
        child_env["PW_CLUSTER_SECRET"] = cluster_secret

    bundle = {"CPU": num_cpus}
    actor_resources = {}
    num_gpus = 0
    if platform == "cuda":
        bundle["GPU"] = int(devices_per_worker)
        num_gpus = int(devices_per_worker)
    elif platform == "tpu":
        bundle["TPU"] = int(devices_per_worker)
        actor_resources["TPU"] = int(devices_per_worker)

    group = placement_group([dict(bundle) for _ in range(int(nodes))], strategy="STRICT_SPREAD")
    try:
        ray.get(group.ready(), timeout=start_timeout)
    except Exception as e:
        remove_placement_group(group)
        raise LaunchError(
            f"Ray could not place {nodes} bundles of {bundle} on separate nodes within {start_timeout:.0f} s "
            f"(live nodes: {sum(1 for n in ray.nodes() if n.get('Alive'))}): {e}"
        ) from None

    Host = ray.remote(_Host)
    actors = []
    for i in range(int(nodes)):
        options = dict(
            max_restarts=int(max_restarts),
            max_task_retries=0,
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=group, placement_group_bundle_index=i),
        )
        if actor_resources:
            options["resources"] = actor_resources
        actors.append(Host.options(**options).remote(command, child_env, listen_host, start_timeout))
    workers = Workers(controller, token, group, actors)
    try:
        # Every actor started its pw-worker (or raised why not).
        ray.get([a.info.remote() for a in actors], timeout=start_timeout + 30)
    except Exception as e:
        workers.stop()
        raise LaunchError(f"starting the pw-workers failed: {e}") from None
    return workers
