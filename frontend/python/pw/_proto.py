"""pw's wire protocol for Python: the message classes of ``pw.proto``,
generated with grpcio-tools the first time they are needed (and again
whenever the .proto changes) into ``_generated/``. The .proto is the
package's own copy where it has one (pw's wheel carries it, with its
messages already generated: scripts/build-wheel.sh), else the checkout's
(``runtime/wire/proto/``, or ``runtime/proto/`` where the runtime keeps it
there).

May import errors and the standard library (and grpc_tools) only."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile

from .errors import PwError

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.abspath(os.path.join(_HERE, "..", "..", ".."))
# Where a checkout keeps pw.proto, in the order looked for: the first that
# exists is the protocol (runtime/proto is where it was before runtime/wire).
PROTO_CANDIDATES = tuple(
    os.path.join(_REPO, *parts, "pw.proto") for parts in [("runtime", "wire", "proto"), ("runtime", "proto")]
)
# The copy pw's wheel carries.
PACKAGED_PROTO = os.path.join(_HERE, "pw.proto")
# Generated modules are named pw_pb2_<the first 16 hex digits of the
# .proto's SHA-256>.py (scripts/build-wheel.sh names the wheel's so too).
_OUT = os.path.join(_HERE, "_generated")


def _find_proto() -> str:
    for path in (PACKAGED_PROTO, *PROTO_CANDIDATES):
        if os.path.isfile(path):
            return path
    raise PwError(
        f"{' or '.join(PROTO_CANDIDATES)} not found: the pw client runs from a checkout of the repository "
        f"or from an install of pw's wheel (scripts/build-wheel.sh)"
    )


def _generate(proto: str, digest: str) -> str:
    """Writes pw_pb2.py for `proto`, whose SHA-256 is `digest`; returns
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
        code = protoc.main(["protoc", f"-I{os.path.dirname(proto)}", f"--python_out={tmp}", os.path.basename(proto)])
        if code != 0:
            raise PwError(f"generating Python messages from {proto} failed (protoc exit {code})")
        os.replace(os.path.join(tmp, "pw_pb2.py"), target)
    return target


def _load():
    proto = _find_proto()
    with open(proto, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    path = _generate(proto, digest)
    spec = importlib.util.spec_from_file_location("pw._generated.pw_pb2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pb = _load()
PROTOCOL = pb.PROTOCOL_V1
