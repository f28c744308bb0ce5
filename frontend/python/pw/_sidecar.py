"""The sidecar: runs a session's Python functions on a pw worker (JAX's
``colocated_python`` functions and the ``pw.sidecar`` steps of pw programs).

pw-worker (or pw-run) starts it (``python -m pw._sidecar``) at a session's
first call of such a function, and ends it with the session (see
``runtime/exec/src/sidecar.rs``). It is not meant to be started by hand.

It connects to the Unix socket ``$PW_SIDECAR_SOCKET``, sends the token
``$PW_SIDECAR_TOKEN`` and then answers the worker's requests, one at a time.
Each message is a little-endian u32 length and that many bytes of JSON:

* ``load``: read the pickle of a function from ``path`` and keep it under
  ``program``;
* ``call``: build the inputs from the shard files the worker wrote, call the
  function, and write each output shard to the file the worker named;
* ``drop``: forget the ``programs`` named (their client destroyed them), and
  with them what they held.

Functions come in two conventions (``pw_core::python::Convention``):

* ``colocated``: ``jax.experimental.colocated_python``. The pickle is JAX's
  (the function, its specs and devices); the inputs are JAX arrays on this
  process's CPU devices, laid out as the step's shards.
* ``whole``: a ``pw.sidecar`` step of a pw program. The pickle is
  cloudpickle's of (function, input tree, output tree); the inputs are
  whole numpy arrays assembled from the shards this worker holds, and each
  output is cut into the shards the worker asked for.

Every reply is ``{"ok": true}`` or ``{"ok": false, "error": TEXT}``, the text
holding the Python traceback of what failed.

Devices: the pickle names devices by the ids the client gave them; this
process's JAX has ``$PW_SIDECAR_DEVICES`` CPU devices, with those ids, and
device ``i`` of a program is the step's ``devices[i]`` (pw's id) on the
worker.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import socket
import struct
import sys
import traceback

# The worker's environment chose the platform; the device count is ours.
_DEVICES = int(os.environ.get("PW_SIDECAR_DEVICES", "1"))

import jax  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", _DEVICES)

from jax import tree_util  # noqa: E402

from . import _jax_compat as compat  # noqa: E402

_MAX_MESSAGE = 256 << 20


class _Colocated:
    """A ``colocated_python`` function: what JAX pickled for it."""

    def __init__(self, name, devices, pickled):
        (
            self.fun,
            self.in_treedef,
            self.in_leaves,
            self.out_treedef,
            self.out_leaves,
            self.device_list,
        ) = pickled
        self.name = name
        self.devices = list(devices)


def _read(sock, n):
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the worker closed the sidecar's socket")
        data += chunk
    return bytes(data)


def _receive(sock):
    (n,) = struct.unpack("<I", _read(sock, 4))
    if n > _MAX_MESSAGE:
        raise ValueError(f"a message of {n} bytes")
    return json.loads(_read(sock, n))


def _send(sock, payload):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    sock.sendall(struct.pack("<I", len(data)) + data)


def _dtype(name):
    return jax.numpy.dtype(name)


def _is_string(dtype):
    return isinstance(dtype, np.dtypes.StringDType)


def _string_bytes(value, size):
    """A one-element string array as pw holds it: u64 length, bytes, zeros."""
    data = str(np.asarray(value).item()).encode()
    if len(data) > size - 8:
        raise ValueError(f"a string of {len(data)} bytes (pw holds at most {size - 8})")
    out = np.zeros(size, dtype=np.uint8)
    out[:8] = np.frombuffer(struct.pack("<Q", len(data)), dtype=np.uint8)
    out[8 : 8 + len(data)] = np.frombuffer(data, dtype=np.uint8)
    return out


def _string_of(held):
    (n,) = struct.unpack("<Q", held[:8].tobytes())
    if n > len(held) - 8:
        raise ValueError(f"a string array says it holds {n} bytes")
    return np.array(held[8 : 8 + n].tobytes().decode(), dtype=np.dtypes.StringDType())


def _box(shard):
    return tuple(slice(o, o + s) for o, s in zip(shard["offsets"], shard["sizes"]))


def _same_box(index, shape, box):
    return tuple(s.indices(n)[:2] for s, n in zip(index, shape)) == tuple(
        (b.start, b.stop) for b in box
    )


class Sidecar:
    def __init__(self):
        self.programs = {}
        cpus = {d.id: d for d in jax.devices("cpu")}
        self.cpus = cpus

    def load(self, request):
        with open(request["path"], "rb") as f:
            data = f.read()
        convention = request.get("convention", "colocated")
        if convention == "colocated":
            program = _Colocated(request["name"], request["devices"], compat.colocated_deserialize(data))
        elif convention == "whole":
            program = _Whole(request["name"], pickle.loads(data))
        else:
            raise ValueError(f"unknown calling convention {convention!r}")
        self.programs[request["program"]] = program

    def drop(self, request):
        """Forgets programs, and collects what only they held (JAX's
        backend destroys a colocated_python_class object so)."""
        for program in request["programs"]:
            self.programs.pop(program, None)
        gc.collect()

    def call(self, request):
        program = self.programs[request["program"]]
        if isinstance(program, _Whole):
            program.call(request)
        else:
            self._call_colocated(program, request)

    def _local(self, program, step_devices):
        """Map a pw device id to this process's JAX device."""
        local = {}
        for pw_id, client_id in zip(step_devices, program.devices):
            local[pw_id] = self.cpus[client_id]
        return local

    def _call_colocated(self, program, request):
        local = self._local(program, request["devices"])
        if len(request["inputs"]) != len(program.in_leaves):
            raise ValueError(
                f"{program.name} takes {len(program.in_leaves)} arrays, {len(request['inputs'])} came"
            )
        args = []
        for k, (operand, spec) in enumerate(zip(request["inputs"], program.in_leaves)):
            shape = tuple(operand["shape"])
            dtype = _dtype(operand["dtype"])
            by_device = {local[s["device"]]: s for s in operand["shards"] if s["device"] in local}
            pieces = []
            string = _is_string(spec.dtype)
            if string:
                shape = ()
            for device, index in spec.sharding.addressable_devices_indices_map(shape).items():
                shard = by_device.get(device)
                if shard is None or not (string or _same_box(index, shape, _box(shard))):
                    raise ValueError(
                        f"input {k} of {program.name}: no shard for {device} as its spec lays it out"
                    )
                data = _load(shard, dtype)
                if string:
                    data = _string_of(data)
                pieces.append(jax.device_put(data, device))
            args.append(jax.make_array_from_single_device_arrays(shape, spec.sharding, pieces))
        args, kwargs = tree_util.tree_unflatten(program.in_treedef, args)
        result = program.fun(*args, **kwargs)
        leaves, treedef = tree_util.tree_flatten(result)
        if program.out_treedef is not None and treedef != program.out_treedef:
            raise ValueError(
                f"{program.name} returned {treedef}, its output specs say {program.out_treedef}"
            )
        if len(leaves) != len(request["outputs"]):
            raise ValueError(
                f"{program.name} returned {len(leaves)} arrays, its output specs say {len(request['outputs'])}"
            )
        out_specs = program.out_leaves or [None] * len(leaves)
        for k, (leaf, operand, spec) in enumerate(zip(leaves, request["outputs"], out_specs)):
            string = spec is not None and _is_string(spec.dtype)
            want = ((), spec.dtype) if string else (tuple(operand["shape"]), _dtype(operand["dtype"]))
            got = (tuple(np.shape(leaf)), leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype)
            if got != want:
                raise ValueError(f"output {k} of {program.name} is {got}, its spec says {want}")
            if not isinstance(leaf, jax.Array):
                leaf = jax.numpy.asarray(leaf)
            shards = {s.device: s for s in leaf.addressable_shards}
            for shard in operand["shards"]:
                device = local.get(shard["device"])
                mine = shards.get(device)
                if mine is None:
                    raise ValueError(
                        f"output {k} of {program.name} is on {sorted(d.id for d in shards)}, "
                        f"not on device {device} as its spec says"
                    )
                data = np.asarray(mine.data)
                if not data.flags.c_contiguous:
                    data = data.copy(order="C")
                if string:
                    data = _string_bytes(data, shard["sizes"][0])
                if list(data.shape) != list(shard["sizes"]):
                    raise ValueError(
                        f"output {k} of {program.name}: its shard on {device} is {data.shape}, "
                        f"its spec lays out {shard['sizes']}"
                    )
                data.tofile(shard["path"])


class _Whole:
    """A ``pw.sidecar`` step: called with whole numpy arrays."""

    def __init__(self, name, pickled):
        self.fun, self.in_tree, self.out_tree = pickled
        self.name = name

    def call(self, request):
        if len(request["inputs"]) != self.in_tree.num_leaves:
            raise ValueError(f"{self.name} takes {self.in_tree.num_leaves} arrays, {len(request['inputs'])} came")
        leaves = [_whole(operand, f"input {k} of {self.name}") for k, operand in enumerate(request["inputs"])]
        args = tree_util.tree_unflatten(self.in_tree, leaves)
        result = self.fun(*args)
        leaves, treedef = tree_util.tree_flatten(result)
        if treedef != self.out_tree:
            raise ValueError(f"{self.name} returned {treedef}, its out_specs say {self.out_tree}")
        for k, (leaf, operand) in enumerate(zip(leaves, request["outputs"])):
            data = np.asarray(leaf)
            want = (tuple(operand["shape"]), _dtype(operand["dtype"]))
            if (data.shape, data.dtype) != want:
                raise ValueError(
                    f"output {k} of {self.name} is {data.dtype}{list(data.shape)}, "
                    f"its out_specs say {want[1]}{list(want[0])}"
                )
            for shard in operand["shards"]:
                np.ascontiguousarray(data[_box(shard)]).tofile(shard["path"])


def _load(shard, dtype):
    """The shard in the file the worker wrote, mapped copy-on-write (the
    function may change it; the file does not), as a plain array."""
    sizes = tuple(shard["sizes"])
    if 0 in sizes or not sizes:
        return np.fromfile(shard["path"], dtype=dtype).reshape(sizes)
    return np.memmap(shard["path"], dtype=dtype, mode="c", shape=sizes).view(np.ndarray)


def _whole(operand, what):
    """The whole array `operand` from its shards (each distinct box read
    once); an error if they do not cover it."""
    shape = tuple(operand["shape"])
    dtype = _dtype(operand["dtype"])
    shards = operand["shards"]
    if any(tuple(s["sizes"]) == shape for s in shards):
        # One shard holds it all (a replicated array): no copy.
        return _load(next(s for s in shards if tuple(s["sizes"]) == shape), dtype)
    out = np.empty(shape, dtype=dtype)
    seen = set()
    covered = 0
    for shard in shards:
        key = (tuple(shard["offsets"]), tuple(shard["sizes"]))
        if key in seen:
            continue
        seen.add(key)
        out[_box(shard)] = _load(shard, dtype)
        covered += int(np.prod(shard["sizes"]))
    if covered != out.size:
        raise ValueError(
            f"{what}: this worker holds {covered} of its {out.size} elements; a pw.sidecar step "
            "takes its inputs whole on each worker (replicate them there, or keep the step's "
            "mesh on one worker)"
        )
    return out


def _user_traceback(error):
    """The traceback of `error` from the first frame outside this module
    (the user's function), or only its message when it arose here."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _die_with_parent():
    """Ask Linux to kill this process when the worker that started it dies
    (prctl PR_SET_PDEATHSIG), so that no sidecar outlives its worker."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def main():
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:  # the worker died before prctl took effect
        return 1
    path = os.environ["PW_SIDECAR_SOCKET"]
    token = os.environ["PW_SIDECAR_TOKEN"]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    _send(sock, token.encode())
    sidecar = Sidecar()
    while True:
        try:
            request = _receive(sock)
        except EOFError:
            return 0
        try:
            ops = {"load": sidecar.load, "call": sidecar.call, "drop": sidecar.drop}
            op = ops.get(request.get("op"))
            if op is None:
                raise ValueError(f"unknown request {request.get('op')!r}")
            op(request)
            reply = {"ok": True}
        except BaseException as e:  # noqa: BLE001 - the user's error goes back to the client
            reply = {"ok": False, "error": _user_traceback(e)}
        _send(sock, reply)


if __name__ == "__main__":
    sys.exit(main())
