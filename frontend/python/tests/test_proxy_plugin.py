"""JAX's `proxy` platform (pw_jax_plugin): found by JAX through the entry
point, clear about what is wrong, and inert unless asked for."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

import pw_jax_plugin as plugin

# Each subprocess imports JAX and, at most, waits out a 2 s connection timeout.
SUBPROCESS_TIMEOUT_S = 120
_ENV_KEYS = (
    "JAX_PLATFORMS",
    plugin.TARGET_ENV,
    plugin.TIMEOUT_ENV,
    plugin.INSECURE_ENV,
)

# Asks JAX for its devices; prints what happened as one JSON line.
_PROBE = r"""
import json, os, sys
import jax
try:
    devices = jax.devices()
except Exception as e:
    out = {"error": str(e), "type": type(e).__name__}
else:
    out = {"platforms": sorted({d.platform for d in devices})}
out["insecure"] = os.environ.get(sys.argv[1])
out["plugin_loaded"] = "pw_jax_plugin" in sys.modules
out["pw_loaded"] = "pw" in sys.modules
print("PROBE " + json.dumps(out))
"""


def _unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _probe(**env: str) -> dict:
    full = {k: v for k, v in os.environ.items() if k not in _ENV_KEYS}
    full.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, plugin.INSECURE_ENV],
        env=full,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PROBE ")]
    assert proc.returncode == 0 and len(lines) == 1, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return json.loads(lines[0][len("PROBE ") :])


def test_an_unreachable_server_is_a_connection_error():
    port = _unused_port()
    out = _probe(JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET=f"grpc://127.0.0.1:{port}", PW_PROXY_CONNECT_TIMEOUT_S="2")
    error = out.get("error", "")
    assert "not in the list of known backends" not in error, error
    assert "Unable to initialize backend 'proxy'" in error, error
    assert "Unable to establish connection" in error and f"127.0.0.1:{port}" in error, error
    # Loopback: the plugin chose insecure credentials (not ALTS).
    assert out["insecure"] == "true"
    assert out["plugin_loaded"]


def test_a_missing_target_is_the_plugins_message():
    out = _probe(JAX_PLATFORMS="proxy")
    error = out.get("error", "")
    assert "JAX_BACKEND_TARGET=grpc://HOST:PORT" in error and "not set" in error, error


def test_a_target_without_the_scheme_is_the_plugins_message():
    out = _probe(JAX_PLATFORMS="proxy", JAX_BACKEND_TARGET="127.0.0.1:1")
    error = out.get("error", "")
    assert "the scheme is required" in error, error


@pytest.mark.parametrize("platforms", [None, "cpu"])
def test_other_platforms_are_unaffected(platforms):
    env = {"JAX_BACKEND_TARGET": f"grpc://127.0.0.1:{_unused_port()}"}
    if platforms is not None:
        env["JAX_PLATFORMS"] = platforms
    out = _probe(**env)
    assert out.get("platforms") == ["cpu"], out
    # Registered, but nothing connected, and pw itself was not imported.
    assert out["plugin_loaded"] and not out["pw_loaded"]
    assert out["insecure"] is None


def test_targets():
    assert plugin.target_from_env({"JAX_BACKEND_TARGET": "grpc://10.0.0.2:8476"}) == (
        "grpc://10.0.0.2:8476",
        "10.0.0.2",
    )
    assert plugin.target_from_env({"JAX_BACKEND_TARGET": "grpc://[::1]:9"})[1] == "::1"
    for bad in ("grpc://host", "grpc://:80", "http://host:80", "host:80", "grpc://host:80/x", "grpc://host:port"):
        with pytest.raises(plugin.ProxyConfigError):
            plugin.target_from_env({"JAX_BACKEND_TARGET": bad})
    with pytest.raises(plugin.ProxyConfigError, match="not set"):
        plugin.target_from_env({})


def test_loopback_hosts():
    for host in ("127.0.0.1", "127.3.4.5", "::1", "localhost", "LOCALHOST"):
        assert plugin.is_loopback(host), host
    for host in ("10.0.0.1", "::2", "example", "0.0.0.0"):
        assert not plugin.is_loopback(host), host


def test_timeouts():
    assert plugin.timeout_from_env({}) == plugin.DEFAULT_TIMEOUT_S
    assert plugin.timeout_from_env({plugin.TIMEOUT_ENV: "5"}) == 5
    for bad in ("0", "-1", "1.5", "soon"):
        with pytest.raises(plugin.ProxyConfigError):
            plugin.timeout_from_env({plugin.TIMEOUT_ENV: bad})


class _Options:
    connection_timeout_in_seconds = None


@pytest.fixture
def fake_client(monkeypatch):
    """make_client() with JAX_PLATFORMS=proxy and a get_client that records
    its arguments instead of connecting."""
    from jax.extend.backend import ifrt_proxy

    calls = []
    monkeypatch.setattr(plugin, "_requested_platforms", lambda: ["proxy"])
    monkeypatch.setattr(ifrt_proxy, "ClientConnectionOptions", _Options)
    monkeypatch.setattr(ifrt_proxy, "get_client", lambda target, options: calls.append((target, options)) or "client")
    for key in _ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    return calls


def test_the_factory_passes_target_and_timeout(fake_client, monkeypatch):
    monkeypatch.setenv(plugin.TARGET_ENV, "grpc://localhost:7")
    monkeypatch.setenv(plugin.TIMEOUT_ENV, "9")
    assert plugin.make_client() == "client"
    [(target, options)] = fake_client
    assert target == "grpc://localhost:7" and options.connection_timeout_in_seconds == 9
    assert os.environ[plugin.INSECURE_ENV] == "true"


def test_the_users_credentials_choice_stands(fake_client, monkeypatch):
    monkeypatch.setenv(plugin.TARGET_ENV, "grpc://127.0.0.1:7")
    monkeypatch.setenv(plugin.INSECURE_ENV, "false")
    plugin.make_client()
    assert os.environ[plugin.INSECURE_ENV] == "false"


def test_remote_hosts_keep_secure_credentials(fake_client, monkeypatch):
    monkeypatch.setenv(plugin.TARGET_ENV, "grpc://10.1.2.3:7")
    plugin.make_client()
    assert plugin.INSECURE_ENV not in os.environ


def test_the_factory_does_nothing_unless_asked(monkeypatch):
    monkeypatch.setattr(plugin, "_requested_platforms", lambda: ["cpu"])
    monkeypatch.setenv(plugin.TARGET_ENV, "grpc://127.0.0.1:7")
    with pytest.raises(RuntimeError, match="only when asked for"):
        plugin.make_client()
