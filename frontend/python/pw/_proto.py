"""pw's wire protocol for Python: the message classes of
``runtime/proto/pw.proto``, generated with grpcio-tools the first time they
are needed (and again whenever the .proto changes) into ``_generated/``."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile

from .errors import PwError

_HERE = os.path.dirname(os.path.abspath(__file__))
_PROTO = os.path.abspath(os.path.join(_HERE, "..", "..", "..", "runtime", "proto", "pw.proto"))
_OUT = os.path.join(_HERE, "_generated")


def _generate(digest: str) -> str:
    """Writes pw_pb2.py for the .proto whose SHA-256 is `digest`; returns
    its path. Written to a temporary directory and renamed into place, so a
    reader never sees half a file."""
    try:
        from grpc_tools import protoc
    except ImportError as e:  # pragma: no cover - setup.sh installs it
        raise PwError("grpcio-tools is missing: run scripts/setup.sh") from e
    os.makedirs(_OUT, exist_ok=True)
    target = os.path.join(_OUT, f"pw_pb2_{digest[:16]}.py")
    if os.path.exists(target):
        return target
    with tempfile.TemporaryDirectory(dir=_OUT) as tmp:
        code = protoc.main(["protoc", f"-I{os.path.dirname(_PROTO)}", f"--python_out={tmp}", os.path.basename(_PROTO)])
        if code != 0:
            raise PwError(f"generating Python messages from {_PROTO} failed (protoc exit {code})")
        os.replace(os.path.join(tmp, "pw_pb2.py"), target)
    return target


def _load():
    if not os.path.isfile(_PROTO):
        raise PwError(f"{_PROTO} not found: the pw client runs from a checkout of the repository")
    with open(_PROTO, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    path = _generate(digest)
    spec = importlib.util.spec_from_file_location("pw._generated.pw_pb2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pb = _load()
PROTOCOL = pb.PROTOCOL_V1
