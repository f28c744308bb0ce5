"""gRPC channels to pw's ports: over TLS when ``$PW_TLS_CA`` names the PEM of
the CA that signed the server's certificate (pw-server ``--tls-cert``),
plain otherwise.

May import errors and grpc only."""

from __future__ import annotations

import os

import grpc

from .errors import ServerError

CA_ENV = "PW_TLS_CA"


def channel(address: str, options=()) -> grpc.Channel:
    """A channel to ``address`` (``host:port``)."""
    ca = os.environ.get(CA_ENV)
    if not ca:
        return grpc.insecure_channel(address, options=options)
    try:
        with open(ca, "rb") as f:
            root = f.read()
    except OSError as e:
        raise ServerError(f"{CA_ENV}={ca}: cannot read the CA certificate: {e}") from None
    if b"-----BEGIN " not in root:
        raise ServerError(f"{CA_ENV}={ca}: not a PEM file")
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=root), options=options)
