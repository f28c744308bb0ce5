"""A shared pw-server tried as its tenants and neighbours would: sessions
usable only by their client, waiters that leave no ghost, bounded lines,
quotas, a status page behind the token, idle connections that cannot lock
clients out, and unmodified JAX through the proxy presenting the token.

One pw-server (with --token and a cluster secret) and one pw-worker, real
processes on 127.0.0.1, ended by PID; a second server where a test needs
other flags."""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request

import grpc
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pw
import pw.client
from pw._local import _env, _stop
from pw._proto import pb
from pw.tools import find_tool

from test_session import doubler

TOKEN = f"security-token-{os.getpid()}"
SECRET = f"security-cluster-secret-{os.getpid()}"
SCRAPE = f"security-scrape-token-{os.getpid()}"
DEVICES = 4
LEASE_MS = 2000
WAIT_S = 30


def _announced(proc, log, timeout=60.0):
    """The status page's address (with its scheme: http or https) and the
    server's, from the lines pw-server prints when it serves (bounded)."""
    found = {}
    deadline = time.monotonic() + timeout
    for line in proc.stdout:
        for key, prefix in (("http", "pw-server: status page on "), ("grpc", "pw-server: listening on ")):
            if line.startswith(prefix):
                found[key] = line[len(prefix) :].strip().rstrip("/")
        if len(found) == 2 or time.monotonic() > deadline:
            break
    assert len(found) == 2, f"pw-server did not start: {open(log).read()[-3000:]}"
    # The rest of its output is not read: let it go nowhere.
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    return found["http"], found["grpc"]


class Cluster:
    """pw-server (`server_args` more) and one pw-worker, with the token,
    the cluster secret and the scrape token; `nofile` is the server's limit
    on open files, when given."""

    def __init__(self, tmp, server_args=(), nofile=None, extra_env=None):
        env = _env()
        env["PW_CLUSTER_SECRET"] = SECRET
        env["PW_METRICS_TOKEN"] = SCRAPE
        env.update(extra_env or {})
        self.env = env
        log = str(tmp / "pw-server.log")
        self.log = log

        # prlimit execs pw-server with the limit (same PID).
        limit = ["prlimit", f"--nofile={nofile}:{nofile}"] if nofile else []
        self.server = subprocess.Popen(
            [
                *limit,
                find_tool("pw-server"),
                "--listen",
                "127.0.0.1:0",
                "--http",
                "127.0.0.1:0",
                "--token",
                TOKEN,
                "--client-lease-ms",
                str(LEASE_MS),
                *server_args,
            ],
            stdout=subprocess.PIPE,
            stderr=open(log, "w"),
            text=True,
            env=env,
        )
        self.workers = []
        try:
            self.page, self.address = _announced(self.server, log)
            self.http = self.page.split("://", 1)[1]
            self.add_worker(tmp)
        except BaseException:
            self.stop()
            raise

    def add_worker(self, tmp, secret=SECRET, args=()):
        env = dict(self.env)
        env["PW_CLUSTER_SECRET"] = secret
        log = str(tmp / f"pw-worker-{len(self.workers)}.log")
        worker = subprocess.Popen(
            [
                find_tool("pw-worker"),
                "--controller",
                self.address,
                "--devices",
                str(DEVICES),
                "--connect-timeout",
                "10",
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "w"),
            env=env,
        )
        self.workers.append(worker)
        deadline = time.monotonic() + WAIT_S
        while not self.status().workers:
            assert worker.poll() is None, open(log).read()
            assert time.monotonic() < deadline, "the worker did not register"
            time.sleep(0.1)
        return worker

    def ask(self, method, request, reply_type, metadata=((("x-pw-token", TOKEN)),)):
        if "PW_TLS_CA" in self.env:
            with open(self.env["PW_TLS_CA"], "rb") as f:
                credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
            channel = grpc.secure_channel(self.address, credentials)
        else:
            channel = grpc.insecure_channel(self.address)
        with channel:
            call = channel.unary_unary(
                f"/pw.v1.Controller/{method}",
                request_serializer=type(request).SerializeToString,
                response_deserializer=reply_type.FromString,
            )
            return call(request, timeout=10, metadata=metadata)

    def status(self):
        return self.ask("Status", pb.StatusRequest(), pb.StatusReply)

    def overview(self):
        return json.loads(self.ask("Overview", pb.OverviewRequest(), pb.OverviewReply).json)

    def connect(self, **kw):
        return pw.connect(self.address, token=TOKEN, **kw)

    def stop(self):
        for w in self.workers:
            _stop(w)
        _stop(self.server)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("secured"))
    yield c
    c.stop()


def test_a_session_is_usable_only_by_its_client(cluster):
    """Another client holding the same token reads the session's id from the
    status, but cannot read its stats or compile in it; on its own stream
    it names its own arrays only (a call naming the victim's array is
    refused, a fetch of the victim's id finds nothing); the key never
    shows; the owner's array is untouched."""
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    with cluster.connect(devices=2, name="victim") as victim:
        exe = doubler().compile(victim)
        y = exe(x)
        assert victim.session >= 1 << 32, "session ids are random 63-bit numbers"
        listed = cluster.overview()
        assert any(s["session"] == victim.session for s in listed["sessions"])
        assert victim._metadata[-1][1] not in json.dumps(listed), "the key is not shown"
        with cluster.connect(devices=2, name="neighbour") as neighbour:
            theirs = (("x-pw-token", TOKEN), neighbour._metadata[-1])
            compile_there = pb.CompileProgramRequest(session=victim.session, name="d", program=doubler().text().encode())
            for metadata in [(("x-pw-token", TOKEN),), theirs]:
                for method, request, reply in [
                    ("SessionStats", pb.SessionStatsRequest(session=victim.session), pb.SessionCounters),
                    ("CompileProgram", compile_there, pb.CompileProgramReply),
                ]:
                    with pytest.raises(grpc.RpcError) as e:
                        cluster.ask(method, request, reply, metadata=metadata)
                    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED, (method, e.value)
                    assert "not this client's" in e.value.details()
            # The neighbour's own stream: the victim's array id names
            # nothing there, and a call naming the victim's array (by its
            # session and id, as a raw request can) is refused.
            with pytest.raises(pw.ArrayError, match=f"does not exist in session {neighbour.session}"):
                neighbour._fetch(y._id, y.shape, y.dtype)
            mine = doubler().compile(neighbour)
            with pytest.raises(pw.ArrayError):
                mine(y)
            out = neighbour._mint()
            raw = pb.SessionCall(
                executable=mine._id,
                arguments=[pb.CallArgument(array=pb.ArrayRef(session=victim.session, array=y._id))],
                outputs=[out],
            )
            neighbour._send(pb.SessionRequest(call=raw))
            with pytest.raises(pw.ArrayError, match=f"is array {y._id} of session {victim.session}, not of this session"):
                neighbour._fetch(out, y.shape, y.dtype)
        np.testing.assert_array_equal(np.asarray(y), x * 2)


def test_over_limit_uploads_are_refused_naming_the_flag(tmp_path):
    """--max-request-mb 1: a call uploading 4 MiB is refused before its
    bytes are read (LimitError naming the flag); the session goes on."""
    c = Cluster(tmp_path, ["--max-request-mb", "1"])
    try:
        with c.connect(devices=1) as client:
            with pw.program("big") as p:
                x = p.input(jax.ShapeDtypeStruct((1024, 1024), jnp.float32))
                with pw.mesh("m", devices=1):
                    y = jax.jit(lambda v: v + 1)(x)
                p.outputs(y)
            exe = p.compile(client)
            # Refused before its bytes are read; the call itself returns
            # at once, its output says why.
            with pytest.raises(pw.LimitError, match=r"--max-request-mb"):
                np.asarray(exe(np.zeros((1024, 1024), np.float32)))
            small = doubler(1).compile(client)(np.ones((8, 4), np.float32))
            np.testing.assert_array_equal(np.asarray(small), 2)
    finally:
        c.stop()


def test_a_session_cannot_hold_more_device_memory_than_its_quota(tmp_path):
    """--session-device-mb 1: one client parks 128 KiB arrays; the ninth
    call is refused by the quota (LimitError naming the flag); what it
    holds shows in pw-status; deleting makes room."""
    c = Cluster(tmp_path, ["--session-device-mb", "1"])
    try:
        with c.connect(devices=2) as client:
            with pw.program("park") as p:
                x = p.input(jax.ShapeDtypeStruct((256, 128), jnp.float32))
                with pw.mesh("m", devices=2):
                    y = jax.jit(lambda v: v * 3, in_shardings=P("x"), out_shardings=P("x"))(x)
                p.outputs(y)
            exe = p.compile(client)
            x = np.ones((256, 128), np.float32)
            # The calls return at once; the ninth and later are refused, and
            # their outputs say so.
            parked = [exe(x) for _ in range(12)]
            for a in parked[:8]:
                a.block_until_ready()
            for a in parked[8:]:
                with pytest.raises(pw.LimitError, match=r"--session-device-mb"):
                    a.block_until_ready()
                a.delete()
            parked = parked[:8]
            out = subprocess.run(
                [find_tool("pw-status"), "--server", c.address],
                capture_output=True,
                text=True,
                timeout=30,
                env=dict(os.environ, PW_TOKEN=TOKEN),
            )
            assert out.returncode == 0, out.stderr
            line = next(l for l in out.stdout.splitlines() if l.startswith("SESSION"))
            assert f"device bytes {1 << 20} of {1 << 20}" in line, line
            for a in parked:
                a.delete()
            again = exe(x)
            np.testing.assert_array_equal(np.asarray(again), 3)
    finally:
        c.stop()


def _raw_session(address, devices, heartbeats: bool, stop: threading.Event):
    """A session stream that opens and then sends heartbeats (or nothing)
    until `stop`; returns the call (cancel() ends it)."""

    def requests():
        yield pb.SessionRequest(open=pb.SessionOpen(protocol=1, name="raw", devices=devices))
        while not stop.wait(0.2):
            if heartbeats:
                yield pb.SessionRequest(heartbeat=True)

    channel = grpc.insecure_channel(address)
    call = channel.stream_stream(
        "/pw.v1.Controller/Session",
        request_serializer=pb.SessionRequest.SerializeToString,
        response_deserializer=pb.SessionEvent.FromString,
    )(requests(), metadata=(("x-pw-token", TOKEN),))
    return channel, call


def _wait(what, condition, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_waiters_hold_leases_and_leave_no_ghost(cluster):
    """A holder keeps every device. 20 waiters send no heartbeat: they
    leave the line within a lease. 30 waiters are cancelled the moment the
    holder closes: afterwards no session is left without a client, and no
    device is held twice."""
    holder = cluster.connect(name="holder")
    stop = threading.Event()
    silent = [_raw_session(cluster.address, 1, False, stop) for _ in range(20)]
    try:
        _wait("20 waiters in line", lambda: len(cluster.overview()["waiting"]) >= 20)
        _wait("the silent waiters leave the line", lambda: not cluster.overview()["waiting"], timeout=4 * LEASE_MS / 1000)
    finally:
        stop.set()
        for channel, call in silent:
            call.cancel()
            channel.close()
    stop = threading.Event()
    waiters = [_raw_session(cluster.address, 1, True, stop) for _ in range(30)]
    try:
        _wait("30 waiters in line", lambda: len(cluster.overview()["waiting"]) >= 30)
        holder.close()
        for channel, call in waiters:
            call.cancel()
    finally:
        stop.set()
        for channel, call in waiters:
            channel.close()
    _wait(
        "every session closed and no one waiting",
        lambda: not cluster.overview()["sessions"] and not cluster.overview()["waiting"],
        timeout=4 * LEASE_MS / 1000 + 5,
    )
    # The devices are free: a client gets all of them at once.
    with cluster.connect(timeout=5) as client:
        assert len(client.devices) == DEVICES


def test_an_idle_session_yields_to_clients_waiting(tmp_path):
    """--idle-timeout-s 1: a client holding every device and asking nothing
    loses its session once another client waits; the waiter gets the
    devices, and the idle client hears why (SessionError naming the flag)."""
    c = Cluster(tmp_path, ["--idle-timeout-s", "1"])
    try:
        idle = c.connect(name="idle")
        time.sleep(1.5)
        assert c.overview()["sessions"], "alone, an idle session is kept"
        with c.connect(timeout=20, name="waiter") as waiter:
            assert len(waiter.devices) == DEVICES
        with pytest.raises(pw.SessionError, match=r"--idle-timeout-s"):
            doubler(1).compile(idle)
        # Its session is over: once its link ends (at its next heartbeat),
        # it is no longer the client p.run would use.
        _wait("the idle client to hear its session ended", lambda: pw.client.open_client() is not idle)
        idle.close()
    finally:
        c.stop()


def test_the_line_is_bounded(tmp_path):
    """--max-waiting 2: a third client waiting for devices is refused with
    LimitError naming the flag."""
    c = Cluster(tmp_path, ["--max-waiting", "2"])
    stop = threading.Event()
    streams = []
    try:
        with c.connect() as holder:
            streams = [_raw_session(c.address, 1, True, stop) for _ in range(2)]
            _wait("2 waiters in line", lambda: len(c.overview()["waiting"]) == 2)
            with pytest.raises(pw.LimitError, match=r"--max-waiting"):
                c.connect(devices=1, timeout=5)
            assert len(holder.devices) == DEVICES
    finally:
        stop.set()
        for channel, call in streams:
            call.cancel()
            channel.close()
        c.stop()


def _get(url, headers=None, context=None):
    request = urllib.request.Request(url, headers=headers or {})
    opener = urllib.request.build_opener(_NoRedirect, urllib.request.HTTPSHandler(context=context))
    try:
        with opener.open(request, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_the_status_page_asks_for_the_token(cluster, tmp_path):
    """Without the token: 401. With the x-pw-token header, or the cookie
    `/?token=` sets: the page and its JSON. A non-loopback --http without a
    token does not start."""
    base = f"http://{cluster.http}"
    status, _, body = _get(base + "/api/status")
    assert status == 401 and "token" in body, (status, body)
    status, _, body = _get(base + "/")
    assert status == 401
    status, _, body = _get(base + "/api/status", {"x-pw-token": TOKEN})
    assert status == 200 and "workers" in json.loads(body)
    status, headers, _ = _get(base + "/?token=" + TOKEN)
    assert status == 303, status
    cookie = headers["set-cookie"].split(";")[0]
    assert "HttpOnly" in headers["set-cookie"]
    status, _, body = _get(base + "/api/status", {"Cookie": cookie})
    assert status == 200
    status, _, _ = _get(base + "/api/status", {"x-pw-token": "wrong"})
    assert status == 401
    out = subprocess.run(
        [find_tool("pw-server"), "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(),
    )
    assert out.returncode == 1 and "not a loopback address" in out.stderr, out.stderr


def _open_port(port, proc):
    """Waits (bounded) until `proc` listens on 127.0.0.1:`port`."""
    deadline = time.monotonic() + WAIT_S
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert proc.poll() is None and time.monotonic() < deadline, f"port {port} never opened"
        time.sleep(0.1)


def test_the_metrics_ask_for_the_token_and_the_cluster_secret(cluster, tmp_path):
    """pw-server's /metrics (on the status page's listener) asks for the
    clients' token or the scrape token (PW_METRICS_TOKEN), as Prometheus
    presents it (a bearer token), and the scrape token opens nothing else;
    a worker's --metrics asks for the cluster secret or the scrape token,
    and on a non-loopback address without a secret the worker does not
    start; a scrape token too short to be one stops both at start."""
    url = f"http://{cluster.http}/metrics"
    assert _get(url)[0] == 401
    assert _get(url, {"Authorization": "Bearer wrong"})[0] == 401
    status, headers, body = _get(url, {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and headers["content-type"].startswith("application/openmetrics-text")
    assert "pw_workers " in body and body.rstrip().endswith("# EOF")
    status, _, body = _get(url, {"Authorization": f"Bearer {SCRAPE}"})
    assert status == 200 and "pw_workers " in body
    for path in ("/", "/api/status", "/metrics/../api/status"):
        assert _get(f"http://{cluster.http}{path}", {"Authorization": f"Bearer {SCRAPE}"})[0] == 401, path
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    worker = cluster.add_worker(tmp_path, args=["--metrics", f"127.0.0.1:{port}"])
    try:
        # The cluster has a worker already: wait for this one's port.
        _open_port(port, worker)
        url = f"http://127.0.0.1:{port}/metrics"
        assert _get(url)[0] == 401
        assert _get(url, {"Authorization": f"Bearer {TOKEN}"})[0] == 401
        for credential in (SECRET, SCRAPE):
            status, _, body = _get(url, {"Authorization": f"Bearer {credential}"})
            assert status == 200 and "pw_device_held_bytes" in body
    finally:
        cluster.workers.remove(worker)
        _stop(worker)
    for tool in ("pw-server", "pw-worker"):
        out = subprocess.run(
            [find_tool(tool), *(["--listen", "127.0.0.1:0"] if tool == "pw-server" else ["--controller", cluster.address])],
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(cluster.env, PW_METRICS_TOKEN="short"),
        )
        assert out.returncode != 0 and "PW_METRICS_TOKEN has 5 bytes" in out.stderr, (tool, out.stderr)
    env = _env()
    env.pop("PW_CLUSTER_SECRET", None)
    out = subprocess.run(
        [find_tool("pw-worker"), "--controller", cluster.address, "--metrics", "0.0.0.0:0", "--connect-timeout", "5"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 1 and "--metrics 0.0.0.0:0: not a loopback address" in out.stderr, out.stderr


def test_idle_connections_do_not_lock_clients_out(tmp_path):
    """The server may open 256 files. 600 connections to its gRPC port and
    its status page that say nothing do not keep a client out: silent
    connections are bounded and closed."""
    c = Cluster(tmp_path, nofile=256)
    sockets = []
    try:
        host, port = c.address.rsplit(":", 1)
        http_host, http_port = c.http.rsplit(":", 1)
        for i in range(600):
            s = socket.socket()
            s.settimeout(5)
            try:
                s.connect((host, int(port)) if i % 2 else (http_host, int(http_port)))
            except OSError:
                s.close()
                continue
            sockets.append(s)
        t0 = time.monotonic()
        with c.connect(devices=1, timeout=20) as client:
            y = doubler(1).compile(client)(np.ones((8, 4), np.float32))
            np.testing.assert_array_equal(np.asarray(y), 2)
        assert time.monotonic() - t0 < 20
        status, _, _ = _get(f"http://{c.http}/api/status", {"x-pw-token": TOKEN})
        assert status == 200
        assert c.server.poll() is None
    finally:
        for s in sockets:
            s.close()
        c.stop()


def test_a_worker_without_the_cluster_secret_is_refused(cluster, tmp_path):
    before = len(cluster.status().workers)
    env = dict(cluster.env, PW_CLUSTER_SECRET="a-different-cluster-secret")
    out = subprocess.run(
        [find_tool("pw-worker"), "--controller", cluster.address, "--devices", "1", "--connect-timeout", "5"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 2, out.stderr
    assert "cluster secret" in out.stderr
    assert len(cluster.status().workers) == before


PROXY_PROGRAM = textwrap.dedent(
    """
    import jax, numpy as np
    x = jax.device_put(np.arange(16, dtype=np.float32))
    print(float(np.asarray(jax.jit(lambda v: v * 2)(x)).sum()))
    """
)


def _jax_through_proxy(address, token):
    env = dict(_env())
    for k in ("JAX_PLATFORMS", "XLA_FLAGS", "PW_TOKEN"):
        env.pop(k, None)
    env.update(JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{address}", PW_PROXY_CONNECT_TIMEOUT_S="20")
    if token:
        env["PW_TOKEN"] = token
    return subprocess.run([sys.executable, "-c", PROXY_PROGRAM], capture_output=True, text=True, timeout=120, env=env)


def test_unmodified_jax_presents_the_token_through_the_proxy(cluster):
    """Under --token the proxy serves JAX when the process has PW_TOKEN (the
    plugin sends it as initialization data), and refuses it otherwise."""
    ok = _jax_through_proxy(cluster.address, TOKEN)
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert ok.stdout.strip().splitlines()[-1] == str(float(np.arange(16).sum() * 2))
    refused = _jax_through_proxy(cluster.address, None)
    assert refused.returncode != 0
    assert "needs its token" in refused.stderr, refused.stderr[-3000:]


def _certificates(tmp):
    """A CA, and a certificate for 127.0.0.1 it signed (openssl)."""

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True, timeout=60)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=pw test CA")
    openssl("req", *ec, "-keyout", "key.pem", "-out", "cert.csr", "-subj", "/CN=127.0.0.1")
    (tmp / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    )
    openssl(
        "x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "cert.pem", "-days", "2", "-extfile", "ext.cnf",
    )
    return {"PW_TLS_CERT": str(tmp / "cert.pem"), "PW_TLS_KEY": str(tmp / "key.pem"), "PW_TLS_CA": str(tmp / "ca.pem")}


def test_grpc_ports_serve_tls(tmp_path, monkeypatch):
    """With --tls-cert/--tls-key on server and worker and PW_TLS_CA
    everywhere, a client runs over TLS (the token and the session's key
    inside it), pw-status too; a client without the CA cannot talk to the
    server, and a server given half a pair does not start."""
    tls = _certificates(tmp_path)
    c = Cluster(tmp_path, extra_env=tls)
    try:
        monkeypatch.setenv("PW_TLS_CA", tls["PW_TLS_CA"])
        # The status page is HTTPS too: the token inside TLS, the cookie
        # marked Secure; plain HTTP and a client without the CA get nothing.
        assert c.page == f"https://{c.http}", c.page
        trusted = ssl.create_default_context(cafile=tls["PW_TLS_CA"])
        status, _, body = _get(f"https://{c.http}/api/status", {"x-pw-token": TOKEN}, trusted)
        assert status == 200 and "workers" in json.loads(body), body
        status, headers, _ = _get(f"https://{c.http}/?token={TOKEN}", context=trusted)
        assert status == 303 and "Secure" in headers["set-cookie"], headers
        with pytest.raises(urllib.error.URLError):
            _get(f"https://{c.http}/api/status", {"x-pw-token": TOKEN}, ssl.create_default_context())
        with pytest.raises((http.client.HTTPException, ConnectionError, urllib.error.URLError)):
            _get(f"http://{c.http}/api/status", {"x-pw-token": TOKEN})
        # A worker's metrics are HTTPS with its certificate too.
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        worker = c.add_worker(tmp_path, args=["--metrics", f"127.0.0.1:{port}"])
        _open_port(port, worker)
        status, _, body = _get(f"https://127.0.0.1:{port}/metrics", {"Authorization": f"Bearer {SCRAPE}"}, trusted)
        assert status == 200 and "pw_device_held_bytes" in body
        with pytest.raises((http.client.HTTPException, ConnectionError, urllib.error.URLError)):
            _get(f"http://127.0.0.1:{port}/metrics", {"Authorization": f"Bearer {SCRAPE}"})
        with c.connect(devices=1) as client:
            y = doubler(1).compile(client)(np.ones((8, 4), np.float32))
            np.testing.assert_array_equal(np.asarray(y), 2)
        out = subprocess.run(
            [find_tool("pw-status"), "--server", c.address],
            capture_output=True,
            text=True,
            timeout=30,
            env=dict(os.environ, PW_TOKEN=TOKEN, PW_TLS_CA=tls["PW_TLS_CA"]),
        )
        assert out.returncode == 0 and "WORKERS (2)" in out.stdout, out.stderr
        monkeypatch.delenv("PW_TLS_CA")
        with pytest.raises(pw.ServerError):
            c.connect(devices=1, timeout=5)
    finally:
        c.stop()
    out = subprocess.run(
        [find_tool("pw-server"), "--listen", "127.0.0.1:0", "--tls-cert", tls["PW_TLS_CERT"]],
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(),
    )
    assert out.returncode == 1 and "--tls-key" in out.stderr, out.stderr
