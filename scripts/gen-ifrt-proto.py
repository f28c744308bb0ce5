#!/usr/bin/env python3
"""Extracts the IFRT proxy protocol from the installed jaxlib.

jaxlib's shared library embeds, as serialized `FileDescriptorProto`s, the
.proto files its IFRT proxy client was built from. This script finds
`xla/python/ifrt_proxy/common/grpc_ifrt_service.proto` (the service
`xla.ifrt.proxy.GrpcIfrtService`); the files of the messages that many of its
fields hold serialized (`xla.ifrt.Serialized {type_name, data}`: shardings,
layouts, compile options; see PAYLOADS); and every file those import,
directly or not; and writes them as one binary `FileDescriptorSet`:

    runtime/proxy/proto/ifrt/ifrt_proxy.fds   (dependencies first, ties by name;
                                         source info, file options and
                                         derivable JSON names stripped)
    runtime/proxy/proto/ifrt/README.md        (where it came from, the files)

`runtime/proxy/build.rs` generates the Rust of the protocol from that set, so the
server speaks exactly what the installed client does.

    scripts/gen-ifrt-proto.py            # (re)writes both files
    scripts/gen-ifrt-proto.py --check    # exits 1 if they are out of date

It needs jaxlib and protobuf, which the project's venv (scripts/setup.sh)
has; run by another Python, it runs itself again with that venv's
(`$PW_VENV`, else `.venv`).
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import importlib.metadata
import importlib.util
import mmap
import os
import sys

ROOT_FILE = "xla/python/ifrt_proxy/common/grpc_ifrt_service.proto"
SERVICE = "xla.ifrt.proxy.GrpcIfrtService"
# What the `data` of an `xla.ifrt.Serialized` holds, by its `type_name` (the
# name jaxlib's SerDes registry writes): the file and the message that decode
# it. Their files join the set. `xla::ifrt::XlaProgram` is not a message: its
# data is the program's StableHLO portable artifact (MLIR bytecode).
PAYLOADS = (
    ("xla::ifrt::HloSharding", "xla/python/pjrt_ifrt/xla_sharding.proto", "xla.ifrt.HloShardingProto"),
    ("xla::ifrt::SingleDeviceSharding", "xla/python/ifrt/sharding_serdes.proto", "xla.ifrt.SingleDeviceShardingProto"),
    ("xla::ifrt::OpaqueSharding", "xla/python/ifrt/sharding_serdes.proto", "xla.ifrt.OpaqueShardingProto"),
    ("xla::ifrt::ConcreteSharding", "xla/python/ifrt/sharding_serdes.proto", "xla.ifrt.ConcreteShardingProto"),
    (
        "xla::ifrt::ConcreteEvenSharding",
        "xla/python/ifrt/sharding_serdes.proto",
        "xla.ifrt.ConcreteEvenShardingProto",
    ),
    (
        "xla::ifrt::ShardingParamSharding",
        "xla/python/ifrt/sharding_serdes.proto",
        "xla.ifrt.ShardingParamShardingProto",
    ),
    ("xla::ifrt::PjRtLayout", "xla/python/pjrt_ifrt/pjrt_layout_serdes.proto", "xla.ifrt.PjRtLayoutProto"),
    ("xla::ifrt::CompactLayout", "xla/python/ifrt/layout_serdes.proto", "xla.ifrt.CompactLayoutProto"),
    ("xla::ifrt::XlaCompileOptions", "xla/python/pjrt_ifrt/xla_compiler.proto", "xla.ifrt.XlaCompileOptionsProto"),
    (
        "xla::ifrt::CustomCallProgram",
        "xla/python/ifrt/custom_call_program.proto",
        "xla.ifrt.CustomCallProgramProto",
    ),
)
# Serialized type names whose data is no message of the set.
RAW_PAYLOADS = (("xla::ifrt::XlaProgram", "the program's StableHLO portable artifact (MLIR bytecode)"),)
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT_DIR = os.path.join(REPO, "runtime", "proxy", "proto", "ifrt")
FDS_PATH = os.path.join(OUT_DIR, "ifrt_proxy.fds")
README_PATH = os.path.join(OUT_DIR, "README.md")

# The field numbers and wire types a FileDescriptorProto may hold at its top
# level (descriptor.proto): everything is length-delimited but for
# public_dependency / weak_dependency (int32, maybe packed) and edition (an
# enum). A tag outside this table (the NUL that ends the C string holding the
# descriptor, say) is where the descriptor ends.
_FILE_FIELDS = {
    1: {2},  # name
    2: {2},  # package
    3: {2},  # dependency
    4: {2},  # message_type
    5: {2},  # enum_type
    6: {2},  # service
    7: {2},  # extension
    8: {2},  # options
    9: {2},  # source_code_info
    10: {0, 2},  # public_dependency
    11: {0, 2},  # weak_dependency
    12: {2},  # syntax
    14: {0},  # edition
    15: {2},  # option_dependency
}
# Bounds on what one embedded descriptor can be (the largest XLA ones are a
# few hundred KiB).
_MAX_DESCRIPTOR_BYTES = 16 << 20
_MAX_FIELDS = 1 << 20
_MAX_FILES = 1000
_MAX_SO_FILES = 1000
_REEXEC_MARK = "PW_GEN_IFRT_PROTO_REEXEC"


class GenError(Exception):
    """A reason the protocol cannot be extracted."""


def _descriptor_pb2():
    try:
        from google.protobuf import descriptor_pb2
    except ImportError as e:
        raise GenError(
            f"the protobuf Python package is not importable with {sys.executable} ({e}); "
            "run this script with the project's venv (.venv/bin/python, made by scripts/setup.sh)"
        ) from None
    return descriptor_pb2


def _jaxlib_dir() -> tuple[str, str]:
    """The installed jaxlib's package directory and version (jaxlib is not
    imported: only its files are read)."""
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.submodule_search_locations:
        raise GenError(
            f"jaxlib is not installed for {sys.executable}; run this script with the "
            "project's venv (.venv/bin/python, made by scripts/setup.sh)"
        )
    directory = list(spec.submodule_search_locations)[0]
    try:
        version = importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        raise GenError(f"jaxlib at {directory} has no package metadata (no version)") from None
    return directory, version


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data, pos: int, end: int) -> tuple[int, int] | None:
    value = 0
    for shift in range(0, 70, 7):
        if pos >= end:
            return None
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
    return None


def _descriptor_end(data, start: int) -> int:
    """Where the serialized FileDescriptorProto that begins at `start` ends:
    the first byte that is not a well-formed top-level field of one."""
    end = min(len(data), start + _MAX_DESCRIPTOR_BYTES)
    pos = start
    for _ in range(_MAX_FIELDS):
        tag = _read_varint(data, pos, end)
        if tag is None:
            return pos
        key, after = tag
        number, wire = key >> 3, key & 7
        if wire not in _FILE_FIELDS.get(number, ()):
            return pos
        if wire == 0:
            value = _read_varint(data, after, end)
            if value is None:
                return pos
            pos = value[1]
        else:
            length = _read_varint(data, after, end)
            if length is None or length[1] + length[0] > end:
                return pos
            pos = length[1] + length[0]
    raise GenError(f"a descriptor at byte {start} has more than {_MAX_FIELDS} fields")


def _has_content(proto) -> bool:
    """More than a name: a lone string that happens to follow a 0x0a byte is
    not a descriptor."""
    return bool(proto.package or proto.message_type or proto.enum_type or proto.service or proto.extension)


def _json_name(name: str) -> str:
    """The JSON name protoc derives from a field's name (descriptor.cc's
    ToJsonName: underscores dropped, the letter after one capitalized)."""
    out, upper = [], False
    for c in name:
        if c == "_":
            upper = True
        elif upper:
            out.append(c.upper())
            upper = False
        else:
            out.append(c)
    return "".join(out)


def _normalize(proto) -> None:
    """Drops what neither the wire format nor Rust code generation uses:
    source info; file options (packages and class names for other
    languages' generators: Go, Java, C#, Objective-C); and JSON names equal
    to the derived ones (jaxlib embeds some files twice, with and without
    them). A file of editions that is plain enums becomes proto3."""
    if proto.HasField("options") and proto.options.HasField("features"):
        raise GenError(f"{proto.name} sets file-level features (editions): keep them")
    proto.ClearField("source_code_info")
    proto.ClearField("options")
    messages = list(proto.message_type)
    fields = list(proto.extension)
    for _ in range(_MAX_FIELDS):
        if not messages:
            break
        message = messages.pop()
        messages.extend(message.nested_type)
        fields.extend(message.field)
        fields.extend(message.extension)
    else:
        raise GenError(f"{proto.name} nests more than {_MAX_FIELDS} messages")
    for field in fields:
        if field.HasField("json_name") and field.json_name == _json_name(field.name):
            field.ClearField("json_name")
    _editions_to_proto3(proto)


def _editions_to_proto3(proto) -> None:
    """Rewrites a file of edition 2023 that only defines enums, and sets no
    features, as proto3: prost's generator knows no editions, and such a
    file means the same in both (open enums whose first value is 0; how a
    field holding one is encoded is its own file's business). Any other
    file of editions is an error."""
    if proto.syntax != "editions":
        return
    pb2 = _descriptor_pb2()
    enums = list(proto.enum_type)
    plain = (
        proto.edition == pb2.EDITION_2023
        and not (proto.message_type or proto.extension or proto.service)
        and all(e.value and e.value[0].number == 0 for e in enums)
        and not any(e.options.HasField("features") for e in enums)
        and not any(v.options.HasField("features") for e in enums for v in e.value)
    )
    if not plain:
        raise GenError(
            f"{proto.name} is of edition {proto.edition} with more than plain enums; "
            "prost's generator knows no editions"
        )
    proto.syntax = "proto3"
    proto.ClearField("edition")


class Library:
    """One shared library, searched for embedded descriptors."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as f:
            self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def contains(self, name: str) -> bool:
        return self.data.find(self._prefix(name)) >= 0

    @staticmethod
    def _prefix(name: str) -> bytes:
        raw = name.encode()
        return b"\x0a" + _varint(len(raw)) + raw  # field 1 (name), length-delimited

    def file(self, name: str):
        """The FileDescriptorProto named `name` embedded here."""
        pb2 = _descriptor_pb2()
        prefix = self._prefix(name)
        found: dict[bytes, object] = {}
        pos = self.data.find(prefix)
        for _ in range(_MAX_FILES):
            if pos < 0:
                break
            end = _descriptor_end(self.data, pos)
            raw = bytes(self.data[pos:end])
            try:
                proto = pb2.FileDescriptorProto.FromString(raw)
            except Exception:  # not a descriptor after all: some other bytes
                proto = None
            if proto is not None and proto.name == name and _has_content(proto):
                _normalize(proto)
                found[proto.SerializeToString(deterministic=True)] = proto
            pos = self.data.find(prefix, pos + 1)
        if not found:
            raise GenError(f"{self.path} embeds no descriptor of {name}")
        if len(found) > 1:
            raise GenError(f"{self.path} embeds {len(found)} different descriptors named {name}")
        return next(iter(found.values()))


def _find_library(directory: str) -> Library:
    """The shared library of jaxlib that embeds the root file (libjax_common.so
    in jaxlib 0.10; others are searched if that changes)."""
    candidates = []
    for base, dirs, files in os.walk(directory):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".so") or ".so." in f:
                candidates.append(os.path.join(base, f))
        if len(candidates) > _MAX_SO_FILES:
            raise GenError(f"more than {_MAX_SO_FILES} shared libraries under {directory}")
    preferred = os.path.join(directory, "libjax_common.so")
    candidates.sort(key=lambda p: (p != preferred, p))
    if not candidates:
        raise GenError(f"jaxlib at {directory} has no shared libraries")
    for path in candidates:
        library = Library(path)
        if library.contains(ROOT_FILE):
            return library
    raise GenError(
        f"no shared library of jaxlib at {directory} embeds {ROOT_FILE} "
        f"(searched {len(candidates)}: {', '.join(os.path.basename(c) for c in candidates)})"
    )


def _roots() -> list[str]:
    """The root file, then the payloads' files (each once)."""
    roots = [ROOT_FILE]
    for _, path, _ in PAYLOADS:
        if path not in roots:
            roots.append(path)
    return roots


def _closure(library: Library) -> dict[str, object]:
    """The root files and every file they import, directly or not, by name."""
    files: dict[str, object] = {}
    pending = list(reversed(_roots()))
    while pending:
        if len(files) > _MAX_FILES:
            raise GenError(f"more than {_MAX_FILES} files in the closure of {ROOT_FILE} and the payloads")
        name = pending.pop()
        if name in files:
            continue
        proto = library.file(name)
        files[name] = proto
        pending.extend(sorted(d for d in proto.dependency if d not in files))
    return files


def _ordered(files: dict[str, object]) -> list[object]:
    """Dependencies before their dependents; among those ready, by name."""
    waiting = {name: set(proto.dependency) for name, proto in files.items()}
    ready = [name for name, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    order = []
    while ready:
        name = heapq.heappop(ready)
        order.append(files[name])
        del waiting[name]
        for other, deps in waiting.items():
            if name in deps:
                deps.discard(name)
                if not deps:
                    heapq.heappush(ready, other)
    if waiting:
        raise GenError(f"the imports of {sorted(waiting)} form a cycle")
    return order


def _check_service(files: dict[str, object]) -> None:
    root = files[ROOT_FILE]
    services = [f"{root.package}.{s.name}" for s in root.service]
    if SERVICE not in services:
        raise GenError(f"{ROOT_FILE} defines the services {services}, not {SERVICE}")


def _check_payloads(library: Library, files: dict[str, object]) -> None:
    """Each payload's message is where PAYLOADS says, and its type name is
    one the library holds (a renamed SerDes would no longer match)."""
    for type_name, path, message in [*PAYLOADS, *((t, None, None) for t, _ in RAW_PAYLOADS)]:
        if library.data.find(type_name.encode()) < 0:
            raise GenError(f"{library.path} does not hold the serialized type name {type_name!r}")
        if path is None:
            continue
        proto = files[path]
        package, _, name = message.rpartition(".")
        if proto.package != package or name not in [m.name for m in proto.message_type]:
            raise GenError(f"{path} does not define {message} (the data of {type_name})")


def generate() -> tuple[bytes, str]:
    """The FileDescriptorSet's bytes and the README's text for the installed jaxlib."""
    pb2 = _descriptor_pb2()
    directory, version = _jaxlib_dir()
    library = _find_library(directory)
    files = _closure(library)
    _check_service(files)
    _check_payloads(library, files)
    fds = pb2.FileDescriptorSet()
    ordered = _ordered(files)
    fds.file.extend(ordered)
    data = fds.SerializeToString(deterministic=True)
    return data, _readme(version, os.path.basename(library.path), ordered, data)


def _readme(version: str, library: str, files: list, data: bytes) -> str:
    lines = [
        "# The IFRT proxy protocol, as jaxlib speaks it",
        "",
        f"`ifrt_proxy.fds` is a binary `FileDescriptorSet` of the service `{SERVICE}`,",
        "the messages its serialized fields hold (below) and everything they import, extracted by",
        f"`scripts/gen-ifrt-proto.py` from the descriptors embedded in `jaxlib/{library}` of",
        f"**jaxlib {version}** (dependencies first, ties by name; source info, file options and",
        "derivable JSON names stripped; a file of edition 2023 holding only plain enums written as",
        "proto3, which means the same and which prost knows). `runtime/proxy/build.rs` generates the Rust of it",
        "(`pw_proxy::protocol`). Do not edit it by hand.",
        "",
        f"SHA-256 of `ifrt_proxy.fds`: `{hashlib.sha256(data).hexdigest()}`",
        "",
        "To regenerate it (after jaxlib changes version), and to check it:",
        "",
        "    .venv/bin/python scripts/gen-ifrt-proto.py",
        "    .venv/bin/python scripts/gen-ifrt-proto.py --check",
        "",
        "`xla.ifrt.Serialized` fields (shardings, layouts, programs, compile options) hold the",
        "serialization of another message, named by `type_name` (as jaxlib's SerDes writes it);",
        "the set includes the files of these messages:",
        "",
        "| `type_name` | `data` |",
        "| --- | --- |",
        *(f"| `{t}` | `{m}` (`{p}`) |" for t, p, m in PAYLOADS),
        *(f"| `{t}` | {what} |" for t, what in RAW_PAYLOADS),
        "",
        f"The {len(files)} files, in the set's order:",
        "",
    ]
    for proto in files:
        lines.append(f"- `{proto.name}` (package `{proto.package}`)")
    lines.append("")
    return "\n".join(lines)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def _reexec_in_venv(argv: list[str]) -> None:
    """Runs this script again with the project's venv (PW_VENV, else .venv)
    when this interpreter lacks jaxlib or protobuf. Once only."""
    if _importable("jaxlib") and _importable("google.protobuf"):
        return
    if os.environ.get(_REEXEC_MARK):
        return
    venv = os.environ.get("PW_VENV") or os.path.join(REPO, ".venv")
    python = os.path.join(venv, "bin", "python")
    if not os.access(python, os.X_OK) or os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    env = dict(os.environ, **{_REEXEC_MARK: "1"})
    os.execve(python, [python, os.path.abspath(__file__), *argv], env)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _reexec_in_venv(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the committed files differ from what the installed jaxlib yields"
    )
    args = parser.parse_args(argv)
    try:
        data, readme = generate()
    except GenError as e:
        print(f"gen-ifrt-proto: {e}", file=sys.stderr)
        return 2
    outputs = [(FDS_PATH, data), (README_PATH, readme.encode())]
    if args.check:
        stale = [path for path, content in outputs if _read(path) != content]
        for path in stale:
            print(
                f"gen-ifrt-proto: {os.path.relpath(path, REPO)} is out of date with the installed jaxlib; "
                "run scripts/gen-ifrt-proto.py",
                file=sys.stderr,
            )
        return 1 if stale else 0
    os.makedirs(OUT_DIR, exist_ok=True)
    for path, content in outputs:
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(content)
        os.replace(tmp, path)
        print(f"wrote {os.path.relpath(path, REPO)} ({len(content)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
