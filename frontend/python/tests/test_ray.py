"""pw-workers launched on Ray (``pw.ray``): a local two-node Ray cluster on
127.0.0.1, a pw-server started here, one pw-worker per Ray node. A program
runs on them and matches JAX; a pw-worker killed from outside is restarted
by Ray, registers again, and the next run matches JAX too; ``stop()`` leaves
no pw-worker behind, and the Ray cluster is shut down.

Skipped when Ray is not installed, unless ``PW_REQUIRE_RAY`` is set (as
``scripts/test.sh`` does after installing it). Every process is ended by
PID and every wait is bounded."""

from __future__ import annotations

import inspect
import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest

import pw
import pw.ray
from pw._local import _first_line, _stop
from pw.tools import find_tool

from conftest import REPO
from test_run import SEED, assert_matches_jax

# Ray turns 127.0.0.1 into the machine's first non-loopback address when it
# connects (and would listen there); this keeps every Ray process of the
# test on loopback. Read when ray is imported, so set first.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:  # pragma: no cover - depends on the environment
    if os.environ.get("PW_REQUIRE_RAY"):
        raise
    pytest.skip("Ray is not installed (scripts/test.sh installs it and sets PW_REQUIRE_RAY)", allow_module_level=True)

TOKEN = f"ray-test-{os.getpid()}"
CLUSTER_SECRET = f"ray-test-cluster-{os.getpid()}"
NODES = 2
DEVICES = 2
WAIT_S = 60.0


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_until(what: str, condition, timeout: float = WAIT_S, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(every)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A pw-server on 127.0.0.1 with a token; ended by PID."""
    logs = tmp_path_factory.mktemp("pw-server")
    log = str(logs / "pw-server.log")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PW_TOKEN", None)
    env["PW_CLUSTER_SECRET"] = CLUSTER_SECRET
    proc = subprocess.Popen(
        [
            find_tool("pw-server"),
            "--listen",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--heartbeat-ms",
            "100",
            "--lease-ms",
            "1000",
            "--compile-cache",
            str(logs / "cache"),
        ],
        stdout=subprocess.PIPE,
        stderr=open(log, "w"),
        text=True,
        env=env,
    )
    try:
        address = _first_line(proc, "pw-server: listening on ", "pw-server", log)
        yield address
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def ray_cluster():
    """Two Ray nodes on 127.0.0.1 (one CPU, a small object store, no
    dashboard), and this process connected to them."""
    node = dict(
        num_cpus=1,
        object_store_memory=100 * 1024 * 1024,
        node_ip_address="127.0.0.1",
        include_dashboard=False,
    )
    cluster = Cluster(initialize_head=True, head_node_args=dict(node))
    try:
        cluster.add_node(**{k: v for k, v in node.items() if k != "include_dashboard"})
        cluster.wait_for_nodes(timeout=WAIT_S)
        ray.init(address=cluster.address, _node_ip_address="127.0.0.1", log_to_driver=False)
        yield cluster
    finally:
        processes = [
            info.process.pid
            for n in cluster.list_all_nodes()
            for infos in n.all_processes.values()
            for info in infos
            if info.process is not None
        ]
        ray.shutdown()
        cluster.shutdown()
        # The Ray cluster is shut down: none of its node processes is left.
        wait_until("the Ray node processes end", lambda: all(gone(p) for p in processes), timeout=30)


def registered(address):
    return {w.address: w.pid for w in pw.ray.registered_workers(address, TOKEN)}


def run_pipeline(examples, address):
    """The pipeline example on the server's workers, on a session of its
    own, compared with plain JAX."""
    block, make_inputs = examples.EXAMPLES["pipeline"]
    inputs = make_inputs(np.random.default_rng(SEED))
    program = examples.capture("pipeline", block, inputs)
    expected = examples.reference(block, inputs)
    with pw.connect(address, token=TOKEN):
        outputs = program.run(*inputs)
    assert_matches_jax(outputs, expected)


def test_workers_on_ray_are_restarted_and_register_again(server, ray_cluster, examples):
    started = time.monotonic()
    workers = pw.ray.launch_workers(
        server, devices_per_worker=DEVICES, nodes=NODES, token=TOKEN, cluster_secret=CLUSTER_SECRET, connect_timeout=20, start_timeout=WAIT_S
    )
    seen = set()
    try:
        entries = workers.wait_registered(timeout=WAIT_S)
        infos = workers.info()
        assert len(entries) == NODES and len(infos) == NODES
        assert len({i["node_ip"] for i in infos}) == 1  # every node is 127.0.0.1 ...
        pids = workers.pids()
        seen.update(pids)
        assert len(set(pids)) == NODES and None not in pids
        assert sorted(registered(server).values()) == sorted(pids), "the server lists exactly these pw-workers"
        # ... yet one bundle per Ray node: the two actors are on two nodes.
        table = ray.util.placement_group_table(workers.placement_group)
        assert table["strategy"] == "STRICT_SPREAD"
        assert len(set(table["bundles_to_node_id"].values())) == NODES
        print(f"\nray: {NODES} workers registered after {time.monotonic() - started:.1f} s")

        run_pipeline(examples, server)

        # A pw-worker killed from outside: Ray restarts its actor, whose
        # new pw-worker registers again as a new worker.
        killed = pids[1]
        before = time.monotonic()
        os.kill(killed, signal.SIGKILL)
        new_pids = wait_until(
            "Ray restarts the actor of the killed pw-worker",
            lambda: (p := workers.pids(timeout=2))[1] not in (None, killed) and p,
        )
        assert new_pids[0] == pids[0], "the other worker is untouched"
        seen.update(new_pids)
        workers.wait_registered(timeout=WAIT_S)
        wait_until(
            "the server lists the restarted worker and not the killed one",
            lambda: sorted(registered(server).values()) == sorted(new_pids),
        )
        assert gone(killed)
        print(f"ray: the killed worker was back after {time.monotonic() - before:.1f} s")

        run_pipeline(examples, server)
    finally:
        seen.update(p for p in workers.pids(timeout=5) if p)
        workers.stop()
    # Every pw-worker ever seen is gone, and so is the placement group.
    wait_until("every pw-worker ends", lambda: all(gone(p) for p in seen), timeout=30)
    wait_until(
        "the placement group is removed",
        lambda: ray.util.placement_group_table(workers.placement_group)["state"] == "REMOVED",
        timeout=30,
    )
    wait_until("the server lists no worker", lambda: not registered(server), timeout=30)
    print(f"ray: the whole test took {time.monotonic() - started:.1f} s")


def test_a_worker_that_cannot_start_is_reported(server, ray_cluster):
    """A pw-worker that exits before it serves (here: no such plugin) is
    not restarted in a loop: the launch fails with its log."""
    with pytest.raises(pw.ray.LaunchError, match="plugin") as e:
        pw.ray.launch_workers(
            server, devices_per_worker=1, nodes=1, token=TOKEN, cluster_secret=CLUSTER_SECRET, plugin="/nonexistent/plugin.so", start_timeout=WAIT_S
        )
    assert "/nonexistent/plugin.so" in str(e.value)
    assert not registered(server)


def test_launch_refuses_bad_arguments(ray_cluster):
    with pytest.raises(ValueError, match="platform"):
        pw.ray.launch_workers("127.0.0.1:1", devices_per_worker=1, platform="rocm")
    with pytest.raises(ValueError, match="devices_per_worker"):
        pw.ray.launch_workers("127.0.0.1:1", devices_per_worker=0)
    with pytest.raises(ValueError, match="needs devices_per_worker"):
        pw.ray.launch_workers("127.0.0.1:1", platform="cuda")
    # More workers than nodes: no placement for the bundles, said so, and
    # nothing left behind.
    with pytest.raises(pw.ray.LaunchError, match="could not place 3 bundles"):
        pw.ray.launch_workers("127.0.0.1:1", devices_per_worker=1, nodes=3, start_timeout=3)


def test_docs_deploy_md_calls_launch_workers_with_real_arguments():
    """The keyword arguments docs/deploy.md passes to launch_workers are
    the function's."""
    with open(os.path.join(REPO, "docs", "deploy.md")) as f:
        text = f.read()
    calls = re.findall(r"launch_workers\((.*?)\)", text, re.S)
    assert calls, "docs/deploy.md shows pw.ray.launch_workers"
    params = set(inspect.signature(pw.ray.launch_workers).parameters)
    for call in calls:
        for keyword in re.findall(r"(\w+)=", call):
            assert keyword in params, f"docs/deploy.md: launch_workers has no {keyword}="
