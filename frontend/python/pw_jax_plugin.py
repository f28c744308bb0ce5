"""JAX's `proxy` platform, for unmodified programs talking to a pw server.

    JAX_PLATFORMS=proxy JAX_BACKEND_TARGET=grpc://127.0.0.1:PORT python train.py

JAX finds this module through the `jax_plugins` entry point of the pw
package (pyproject.toml) and calls `initialize()` the first time it looks
for backends, in every JAX program of the environment. `initialize()` only
registers a backend factory named "proxy"; the factory runs, and connects,
only when the program asks for that platform (`JAX_PLATFORMS=proxy`, or
`jax.config.update("jax_platforms", "proxy")` before the first use). The
client is jaxlib's own IFRT proxy client
(`jax.extend.backend.ifrt_proxy.get_client`).

Environment:

* `JAX_BACKEND_TARGET`: `grpc://host:port` of the server (required).
* `PW_PROXY_CONNECT_TIMEOUT_S`: how long to try to connect, in whole
  seconds (default 60).
* `PW_PROXY_DEVICES`: how many of the server's devices the session asks
  for (default: every device that is free); sent as the session's
  initialization data (`pw.devices`).
* `PW_TOKEN`: the server's `--token`, when it has one; sent as the
  session's initialization data (`pw.token`: jaxlib's proxy client sends
  no headers of its own).
* `IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS`: set to `true` here when the
  target's host is loopback and the variable is unset (the client tries
  ALTS credentials otherwise and fails with "Invalid credentials").

This is a top-level module, not part of the `pw` package, so that JAX's
plugin discovery imports nothing more (no gRPC, no pw) in programs that
never use the platform.
"""

from __future__ import annotations

import ipaddress
import os
import urllib.parse

PLATFORM = "proxy"
TARGET_ENV = "JAX_BACKEND_TARGET"
TIMEOUT_ENV = "PW_PROXY_CONNECT_TIMEOUT_S"
DEVICES_ENV = "PW_PROXY_DEVICES"
# The key of the device count in the session's initialization data.
DEVICES_KEY = "pw.devices"
# The server's token, and its key in the initialization data.
TOKEN_ENV = "PW_TOKEN"
TOKEN_KEY = "pw.token"
INSECURE_ENV = "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS"
DEFAULT_TIMEOUT_S = 60
SCHEME = "grpc"
# Below the built-in platforms, as pathwaysutils registers it: never chosen
# unless asked for.
PRIORITY = -1

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class ProxyConfigError(RuntimeError):
    """The environment does not say (well) where the proxy server is."""


def initialize() -> None:
    """Registers the "proxy" backend factory (cheap: nothing connects)."""
    from jax.extend.backend import register_backend_factory

    register_backend_factory(PLATFORM, make_client, priority=PRIORITY)


def _requested_platforms() -> list[str]:
    import jax

    value = jax.config.jax_platforms or ""
    return [p.strip() for p in value.split(",") if p.strip()]


def target_from_env(environ=None) -> tuple[str, str]:
    """The server's address (`grpc://host:port`, as the client takes it) and
    its host, from `JAX_BACKEND_TARGET`; a `ProxyConfigError` if it is
    missing or malformed."""
    environ = os.environ if environ is None else environ
    target = environ.get(TARGET_ENV, "").strip()
    if not target:
        raise ProxyConfigError(
            f"JAX_PLATFORMS=proxy needs {TARGET_ENV}=grpc://HOST:PORT, the address of the pw "
            f"server (e.g. {TARGET_ENV}=grpc://127.0.0.1:8476); it is not set"
        )
    parts = urllib.parse.urlsplit(target)
    if parts.scheme != SCHEME or not parts.netloc:
        raise ProxyConfigError(
            f"{TARGET_ENV}={target!r} must be grpc://HOST:PORT (the scheme is required), "
            f"e.g. grpc://127.0.0.1:8476"
        )
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or parts.path not in ("", "/") or parts.query:
        raise ProxyConfigError(f"{TARGET_ENV}={target!r} must be grpc://HOST:PORT, with a host and a port")
    return target, parts.hostname


def is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _positive(environ, name: str, unit: str) -> int | None:
    """The whole number above 0 that variable `name` holds (None: unset)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ProxyConfigError(f"{name}={raw!r} must be a whole number of {unit} above 0")
    return value


def timeout_from_env(environ=None) -> int:
    value = _positive(environ, TIMEOUT_ENV, "seconds")
    return DEFAULT_TIMEOUT_S if value is None else value


def devices_from_env(environ=None) -> int | None:
    return _positive(environ, DEVICES_ENV, "devices")


def make_client():
    """The backend factory: jaxlib's IFRT proxy client, connected to
    `JAX_BACKEND_TARGET`."""
    if PLATFORM not in _requested_platforms():
        # JAX tries every registered factory when JAX_PLATFORMS is unset
        # (and records a failure quietly): connect only when asked.
        raise RuntimeError(
            f"pw's '{PLATFORM}' platform is used only when asked for: set JAX_PLATFORMS={PLATFORM} "
            f"and {TARGET_ENV}=grpc://HOST:PORT"
        )
    target, host = target_from_env()
    timeout = timeout_from_env()
    devices_from_env()
    if is_loopback(host) and INSECURE_ENV not in os.environ:
        os.environ[INSECURE_ENV] = "true"

    from jax.extend.backend import ifrt_proxy

    options = ifrt_proxy.ClientConnectionOptions()
    options.connection_timeout_in_seconds = timeout
    data = {}
    devices = devices_from_env()
    if devices is not None:
        data[DEVICES_KEY] = devices
    token = os.environ.get(TOKEN_ENV)
    if token:
        # The client's attribute map takes bytes, not str.
        data[TOKEN_KEY] = token.encode()
    if data:
        options.initialization_data = data
    return ifrt_proxy.get_client(target, options)
