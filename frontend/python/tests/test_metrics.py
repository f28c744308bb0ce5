"""Prometheus metrics, read as Prometheus reads them: pw-server's `/metrics`
(on its --http listener) and pw-worker's (`--metrics`), parsed by the
`prometheus_client` package's OpenMetrics parser (the format both serve),
checked against what the test did: a session's calls, the runs they made,
the bytes it sent and fetched, the arrays it keeps on the devices (counted
by the controller from its metadata and by the worker from its PJRT
buffers: the two must agree), and the requests of an unmodified JAX
program through the IFRT proxy.

One pw-server and one pw-worker of 4 CPU devices, real processes on
127.0.0.1, ended by PID."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request

import numpy as np
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

import pw
from pw._local import LocalServer

from test_session import doubler

CALLS = 5
WAIT_S = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    http, metrics = _free_port(), _free_port()
    s = LocalServer(
        4,
        server_args=["--http", f"127.0.0.1:{http}"],
        worker_args=["--metrics", f"127.0.0.1:{metrics}", "--log-format", "json"],
    )
    s.http = f"http://127.0.0.1:{http}/metrics"
    s.worker_metrics = f"http://127.0.0.1:{metrics}/metrics"
    yield s
    s.stop()


def scrape(url: str) -> dict:
    """{(sample name, sorted labels): value} of one scrape of `url`."""
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("application/openmetrics-text"), r.headers["Content-Type"]
        text = r.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: dict, metric: str, /, **labels) -> float:
    """The sum of `metric`'s samples whose labels include `labels`."""
    want = set((k, str(v)) for k, v in labels.items())
    hits = [v for (n, ls), v in samples.items() if n == metric and want <= set(ls)]
    assert hits, f"no sample {metric}{labels}: {sorted(n for n, _ in samples)}"
    return sum(hits)


def eventually(check, what: str):
    """`check()` until it returns a true value (bounded by WAIT_S)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"{what} did not happen within {WAIT_S} s"
        time.sleep(0.1)


def test_the_metrics_count_what_a_session_did(cluster):
    before = scrape(cluster.http)
    runs_before = value(before, "pw_runs_total", outcome="ok")
    bytes_in = lambda m: value(m, "pw_client_bytes_total", direction="received")
    bytes_out = lambda m: value(m, "pw_client_bytes_total", direction="sent")
    worker_in = lambda m: value(m, "pw_worker_client_bytes_total", direction="received")
    worker_out = lambda m: value(m, "pw_worker_client_bytes_total", direction="sent")
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    with pw.connect(cluster.address, devices=2, name="metrics-test") as client:
        exe = doubler().compile(client)
        kept = []
        for i in range(CALLS):
            y = exe(x + i)
            np.testing.assert_array_equal(np.asarray(y), (x + i) * 2)
            kept.append(y)
        after = scrape(cluster.http)
        session = dict(name="metrics-test", session=client.session)
        assert value(after, "pw_session_calls_total", **session) == CALLS
        assert value(after, "pw_session_call_duration_seconds_count", **session) == CALLS
        assert value(after, "pw_session_call_duration_seconds_sum", **session) > 0
        assert value(after, "pw_session_devices", **session) == 2
        assert value(after, "pw_session_arrays", **session) == CALLS
        assert value(after, "pw_sessions") == 1
        assert value(after, "pw_runs_total", outcome="ok") - runs_before == CALLS
        # Each call sent x (128 bytes) and fetched y (128 bytes): through
        # the controller or straight to and from the worker.
        sent = bytes_in(after) - bytes_in(before) + worker_in(after) - worker_in(before)
        fetched = bytes_out(after) - bytes_out(before) + worker_out(after) - worker_out(before)
        assert sent >= CALLS * x.nbytes, sent
        assert fetched >= CALLS * x.nbytes, fetched
        # The kept arrays: the controller's count of their bytes, and the
        # worker's of its buffers (its heartbeat, and its own /metrics).
        want = value(after, "pw_session_device_bytes", **session)
        assert want == CALLS * x.nbytes
        eventually(lambda: value(scrape(cluster.http), "pw_device_held_bytes") == want, "the heartbeat's held bytes")
        own = scrape(cluster.worker_metrics)
        assert value(own, "pw_device_held_bytes") == want
        assert value(own, "pw_device_held_buffers") == 2 * CALLS  # two shards each
        assert value(own, "pw_worker_parts_total", outcome="done") >= CALLS
        assert value(own, "pw_device_busy_seconds_total") >= 0
        assert len([k for k in own if k[0] == "pw_device_queued_steps"]) == 4
        assert value(after, "pw_workers") == 1
        assert value(after, "pw_worker_heartbeat_age_seconds") < 5
    # The session's samples leave with it; the worker frees its arrays.
    closed = eventually(
        lambda: (lambda m: m if not any(n.startswith("pw_session_") for n, _ in m) else None)(scrape(cluster.http)),
        "the session's samples leaving",
    )
    assert value(closed, "pw_sessions") == 0
    eventually(lambda: value(scrape(cluster.worker_metrics), "pw_device_held_bytes") == 0, "the arrays being freed")


def _through_proxy(cluster):
    """Runs a small unmodified JAX program through the IFRT proxy."""
    program = textwrap.dedent(
        """
        import jax, numpy as np
        x = jax.device_put(np.arange(8, dtype=np.float32))
        y = jax.jit(lambda v: v * 3)(x)
        assert np.asarray(y).tolist() == [3.0 * i for i in range(8)]
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
    env.update(JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://{cluster.address}")
    proc = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_metrics_count_the_proxy_s_requests(cluster):
    """An unmodified JAX program through the proxy: its requests by type."""
    before = scrape(cluster.http)
    count = lambda m, label: sum(v for (n, ls), v in m.items() if n == "pw_proxy_requests_total" and label in ls)
    _through_proxy(cluster)
    after = scrape(cluster.http)
    for request in ["InitRequest", "CompileRequest", "LoadedExecutableExecuteRequest", "CopyToHostBufferRequest"]:
        label = ("request", request)
        assert count(after, label) - count(before, label) >= 1, (request, sorted(k for k in after if "proxy" in k[0]))
    assert count(after, ("status", "ok")) - count(before, ("status", "ok")) >= 4
    assert count(after, ("status", "error")) == count(before, ("status", "error"))


DASHBOARD = os.path.join(os.path.dirname(__file__), "..", "..", "..", "deploy", "grafana", "pw-dashboard.json")
# Grafana's own variables, and what stands in for them when parsing.
GRAFANA_VARIABLES = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}


def _selectors(node, out, grouped):
    """The vector selectors under `node` of a promql_parser tree, as
    (metric, labels its matchers name), into `out`; and each aggregation's
    `by` labels with the selectors under it, into `grouped`."""
    kind = type(node).__name__
    if kind == "VectorSelector":
        out.append((node.name, {m.name for m in node.matchers.matchers}))
    elif kind == "MatrixSelector":
        _selectors(node.vector_selector, out, grouped)
    elif kind == "AggregateExpr":
        inner = []
        _selectors(node.expr, inner, grouped)
        out.extend(inner)
        if node.modifier is not None:
            grouped.append((set(node.modifier.labels), inner))
    elif kind == "Call":
        for arg in node.args:
            _selectors(arg, out, grouped)
    elif kind == "BinaryExpr":
        _selectors(node.lhs, out, grouped)
        _selectors(node.rhs, out, grouped)
    elif kind in ("ParenExpr", "UnaryExpr", "SubqueryExpr"):
        _selectors(node.expr, out, grouped)
    else:
        assert kind in ("NumberLiteral", "StringLiteral"), kind


def test_the_grafana_dashboard_shows_what_pw_exports(cluster):
    """deploy/grafana/pw-dashboard.json, checked against real scrapes of
    the server and the worker taken while a session was open and after a
    JAX program ran through the proxy: every query parses as PromQL (the
    `promql_parser` package, the Prometheus parser's grammar), names only
    metrics pw exports and labels those metrics have, groups by labels
    they have, and its legend names labels the query keeps; every panel
    reads the dashboard's Prometheus variable, panels do not overlap, and
    every variable a query uses is the dashboard's or Grafana's."""
    import re

    import promql_parser

    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    labels = {}  # sample name -> the label names its samples have

    def scrape_both():
        for url in (cluster.http, cluster.worker_metrics):
            for name, ls in scrape(url):
                labels.setdefault(name, set()).update(k for k, _ in ls)

    with pw.connect(cluster.address, devices=2, name="dashboard") as client:
        y = doubler().compile(client)(np.ones((8, 4), np.float32))
        np.asarray(y)
        scrape_both()
    # The proxy's JAX takes every device: after the session.
    _through_proxy(cluster)
    scrape_both()

    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert "datasource" in variables
    for v in dashboard["templating"]["list"]:
        if v["type"] == "query":
            metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", v["query"]["query"]).groups()
            assert label in labels[metric], (v["name"], metric, label)

    ids, cells = set(), {}
    queries = 0
    for panel in dashboard["panels"]:
        assert panel["id"] not in ids, panel["title"]
        ids.add(panel["id"])
        g = panel["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, panel["title"]
        for cell in ((x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])):
            assert cell not in cells, f"{panel['title']} overlaps {cells[cell]}"
            cells[cell] = panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"] and panel.get("description"), panel["title"]
        for target in panel["targets"]:
            expr = target["expr"]
            used = set(re.findall(r"\$(\w+)", expr))
            assert used <= variables | set(GRAFANA_VARIABLES), (panel["title"], used)
            text = re.sub(r"\$(\w+)", lambda m: GRAFANA_VARIABLES.get(m.group(1), ".*"), expr)
            selectors, grouped = [], []
            _selectors(promql_parser.parse(text), selectors, grouped)
            assert selectors, expr
            for metric, matched in selectors:
                assert metric in labels, f"{panel['title']}: pw exports no {metric}"
                assert matched <= labels[metric], f"{panel['title']}: {metric} has no {matched - labels[metric]}"
            for by, under in grouped:
                have = set().union(*(labels[m] for m, _ in under))
                assert by <= have, f"{panel['title']}: grouped by {by - have}, which {expr} does not have"
            kept = set().union(*(by for by, _ in grouped)) if grouped else set()
            legend = set(re.findall(r"\{\{(\w+)\}\}", target.get("legendFormat", "")))
            assert legend <= kept - {"le"}, f"{panel['title']}: the legend names {legend - kept}"
            queries += 1
    assert queries >= 20, queries


def test_a_worker_logs_json_lines(cluster):
    """`--log-format json`: every line of the worker's log is one JSON
    object with the time, level, target and message."""
    with open(os.path.join(cluster.logs, "pw-worker.log")) as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert records and len(records) == len(lines), lines[:5]
    assert all({"timestamp", "level", "target"} <= r.keys() for r in records), records[:3]
    assert any(r.get("message", "").startswith("registered with the controller") for r in records), records
