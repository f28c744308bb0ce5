"""A client of pw-server: a session holding a slice of the devices, programs
compiled once for it, and arrays that stay on the devices between calls.

    client = pw.connect()                # a local pw-server, started on demand
    step = p.compile(client, donate_argnums=(0,))
    params = step(params, batch)         # pw.Arrays, on the devices
    print(np.asarray(params[0]))         # fetched when asked for
    client.close()

See docs/frontend.md ("Sessions") and docs/cluster.md.

May import errors, tools, _channel, _local, _session and _proto: not the program (a program is
passed in and used through its public API: name, text, unflatten_outputs),
the tracer or JAX's private API.
"""

from __future__ import annotations

import atexit
import collections
import itertools
import os
import sys
import threading
import time
import weakref
import zlib
from dataclasses import dataclass

import grpc
import jax
import numpy as np

from . import _channel, _local, _session
from ._proto import PROTOCOL, pb
from .tools import check_schedule
from .errors import (
    AccessDeniedError,
    ArrayDeletedError,
    ArrayError,
    DevicesBusyError,
    LimitError,
    ProgramError,
    PwError,
    RunError,
    ServerError,
    SessionError,
    ToolError,
    where,
)

CHUNK = 1 << 20
_SERVICE = "/pw.v1.Controller/"
_OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]
# The first id the client gives an array (the server's own stay below).
CLIENT_ARRAYS = 1 << 62
# Host arguments of one call up to this many bytes travel inside its message.
INLINE_BYTES = 1 << 20
# Requests queued for the server before a call waits (the server also holds
# a session back while it has --max-calls-in-flight calls running).
QUEUED = 1024
# How long a client whose connection broke tries to take its session back
# from a pw-server restarted with --state-dir (seconds; 0: never).
RECONNECT_ENV = "PW_RECONNECT_TIMEOUT"
RECONNECT_S = 60.0
# The most calls kept to send again after a reconnect (those the server's
# journal may not hold yet: `SessionReply.calls_logged`).
WINDOW = 4096
# Ask the server for a CRC-32 of every fetched array (TCP, and TLS when on,
# already check every segment).
CHECKSUM_ENV = "PW_CHECKSUM"
# Arrays larger than this are fetched straight from the workers that hold
# them (the server hands out tickets; pw_wire::bulk), unless the server
# speaks TLS or $PW_DIRECT=0; the server decides shard by shard.
DIRECT_BYTES = 1 << 20
DIRECT_ENV = "PW_DIRECT"
# Host arguments larger than this go straight to the workers (a direct put)
# before their call is sent, under the same conditions.
DIRECT_PUT_BYTES = 4 << 20


def _dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        # bfloat16, the 8-bit floats and the sub-byte types are ml_dtypes'.
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


def _chunks(data: bytes | memoryview):
    """pw's chunks of a payload: offset, total, and the CRC-32 on the last."""
    view = memoryview(data).cast("B")
    total = len(view)
    if total == 0:
        yield pb.Chunk(offset=0, total=0, data=b"", crc32=0)
        return
    for start in range(0, total, CHUNK):
        piece = view[start : start + CHUNK]
        last = start + len(piece) == total
        chunk = pb.Chunk(offset=start, total=total, data=bytes(piece))
        if last:
            chunk.crc32 = zlib.crc32(view) & 0xFFFFFFFF
        yield chunk


class _Progress:
    """Prints, at most once a second, how far a long transfer has got
    (only transfers of at least PROGRESS_BYTES that take over a second)."""

    def __init__(self, what: str, total: int):
        self.what, self.total, self.done = what, total, 0
        self.start = self.last = time.monotonic()

    def add(self, n: int):
        self.done += n
        now = time.monotonic()
        if self.total >= PROGRESS_BYTES and now - self.last >= 1.0:
            self.last = now
            rate = self.done / max(now - self.start, 1e-9) / 1e6
            print(
                f"pw: {self.what}: {self.done >> 20} of {self.total >> 20} MiB ({rate:.0f} MB/s)",
                file=sys.stderr,
                flush=True,
            )


PROGRESS_BYTES = 64 << 20

_KINDS = {
    "session": SessionError,
    "program": ToolError,
    "argument": ProgramError,
    "array": ArrayError,
    "run": RunError,
    "busy": DevicesBusyError,
    "denied": AccessDeniedError,
    "limit": LimitError,
}


def _of_kind(kind: str, message: str) -> PwError:
    """The exception for an error the server names with `kind`."""
    if message.startswith("error: "):
        message = message[len("error: ") :]
    return _KINDS.get(kind, ServerError)(message)


def _error(e: grpc.RpcError, address: str) -> PwError:
    """The exception for a failed request: the server says which kind in
    the `pw-error` metadata."""
    code = e.code()
    message = e.details() or str(code)
    kind = ""
    for key, value in e.trailing_metadata() or ():
        if key == "pw-error":
            kind = value
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) and not kind:
        return _session.unreachable(address, message)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return ServerError(f"the pw-server at {address} refused the client: {message}")
    return _of_kind(kind, message)


@dataclass(frozen=True)
class Sharding:
    """Where an array's shards are: the device of each mesh position, and
    how the array is split over them (as pw prints it)."""

    devices: tuple[int, ...]
    spec: str

    def __repr__(self):
        return f"Sharding(devices={list(self.devices)}, {self.spec})"


class Array:
    """An array of a session, on its devices: a handle, usable at once
    (the call that makes it may still be on its way). ``np.asarray(a)``
    fetches it (waiting for that call); ``block_until_ready()`` waits
    without fetching; either raises the call's error if it failed.
    ``delete()`` frees it on the devices (as does dropping the last
    reference)."""

    def __init__(self, client: "Client", array: int, layout: "_Layout", origin: tuple[int, bool, int]):
        self._client = client
        self._id = array
        self.shape, self.dtype, self._sharding = layout.shape, layout.dtype, layout.sharding
        self._deleted = False
        self._value = None
        # (executable, input?, index): what it is laid out as, for taking
        # the session back after the server restarted.
        client._origins[array] = origin

    @property
    def sharding(self) -> Sharding:
        """Its devices and split (other devices after ``Client.resume``)."""
        moved = self._client._placed.get(self._id)
        return self._sharding if moved is None else Sharding(moved, self._sharding.spec)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def _check(self):
        if self._deleted:
            raise ArrayDeletedError(
                f"{where()}: Array has been deleted (array {self._id} of session {self._client.session})"
            )
        if self._id in self._client._lost:
            raise ArrayError(
                f"{where()}: array {self._id} of session {self._client.session} is lost: the pw-server "
                "restarted, and no worker had kept all of it"
            )

    def _ref(self):
        self._check()
        return pb.ArrayRef(session=self._client.session, array=self._id)

    def is_deleted(self) -> bool:
        return self._deleted

    def block_until_ready(self) -> "Array":
        """Waits until the call that makes it is done; raises its error."""
        self._check()
        self._client._ask(lambda i: pb.SessionRequest(wait=pb.SessionWait(id=i, arrays=[self._id])), again=True).result()
        return self

    def delete(self) -> None:
        """Frees the array on its devices; using it afterwards raises."""
        if self._deleted:
            return
        self._deleted = True
        self._value = None
        self._client._origins.pop(self._id, None)
        self._client._send(pb.SessionRequest(delete=pb.SessionDelete(arrays=[self._id])))

    def __array__(self, dtype=None, copy=None):
        if self._value is None:
            self._check()
            self._value = self._client._fetch(self._id, self.shape, self.dtype)
        value = self._value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def __repr__(self):
        state = "deleted" if self._deleted else f"sharding={self.sharding!r}"
        return f"pw.Array({self.dtype}{list(self.shape)}, session {self._client.session}, array {self._id}, {state})"

    def __del__(self):
        client = getattr(self, "_client", None)
        if client is not None and not self._deleted:
            client._released.append(self._id)


@dataclass(frozen=True)
class _Layout:
    """An input's or output's type and place, read once from the server's
    description (`ArrayInfo`)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    sharding: Sharding
    type: object  # pb.ArrayType

    @staticmethod
    def of(info) -> "_Layout":
        dtype = _dtype(info.type.dtype)
        shape = tuple(int(d) for d in info.type.dims)
        return _Layout(shape, dtype, Sharding(tuple(info.devices), info.sharding), pb.ArrayType(dtype=dtype.name, dims=list(shape)))


class Executable:
    """A program compiled for a client's devices: call it with the inputs
    (numpy arrays or pw.Arrays, in the pytrees of ``p.run``); it returns
    the outputs as pw.Arrays, at once, in the pytree of ``p.outputs``,
    without waiting for the server: the call travels on the session's
    stream behind the ones before it (see docs/frontend.md, "Asynchronous
    calls")."""

    def __init__(self, client: "Client", program, compiled, donate: tuple[int, ...]):
        self._client = client
        self._program = program
        self._id = compiled.executable
        self.inputs = list(compiled.inputs)
        self.outputs = list(compiled.outputs)
        self.lowered = compiled.lowered
        self.compiled = compiled.compiled
        self.cached = compiled.cached
        self._donate = frozenset(donate)
        self._place(compiled.inputs, compiled.outputs)
        client._executables[self._id] = self

    def _place(self, inputs, outputs):
        """Where its inputs and outputs are (again after a resume)."""
        self.inputs, self.outputs = list(inputs), list(outputs)
        self._inputs = [_Layout.of(i) for i in self.inputs]
        self._outputs = [_Layout.of(o) for o in self.outputs]

    def __call__(self, *args):
        started = time.perf_counter_ns()
        # For the server's session trace (pw-server --trace-sessions).
        started_unix = time.time_ns()
        client = self._client
        client._check_open()
        leaves = jax.tree.leaves(args, is_leaf=lambda x: isinstance(x, Array))
        if len(leaves) != len(self.inputs):
            raise ProgramError(f"{where()}: the program takes {len(self.inputs)} inputs, got {len(leaves)}")
        arguments, hosts, puts = [], [], []
        for i, (leaf, want) in enumerate(zip(leaves, self._inputs)):
            want_shape, want_dtype = want.shape, want.dtype
            if isinstance(leaf, Array):
                ref = leaf._ref()
                if leaf._client is not client:
                    raise ArrayError(
                        f"{where()}: input #{i} is array {leaf._id} of session {leaf._client.session}, "
                        f"not of this session ({client.session})"
                    )
                shape, dtype = leaf.shape, leaf.dtype
                arguments.append(pb.CallArgument(array=ref))
            else:
                a = np.asarray(leaf)
                shape, dtype = tuple(a.shape), a.dtype
            if shape != want_shape or dtype != want_dtype:
                raise ProgramError(
                    f"{where()}: input #{i} is {dtype}{list(shape)}, the program expects {want_dtype}{list(want_shape)}"
                )
            if isinstance(leaf, Array):
                continue
            put = client._put_direct(self._id, i, a, puts)
            if put is not None:
                client._origins[put] = (self._id, True, i)
                arguments.append(pb.CallArgument(array=pb.ArrayRef(session=client.session, array=put)))
            else:
                arguments.append(pb.CallArgument(host=want.type))
                hosts.append(a)
        outputs = [client._mint() for _ in self._outputs]
        release = client._take_released()
        for r in release:
            client._origins.pop(r, None)
        call = pb.SessionCall(executable=self._id, arguments=arguments, outputs=outputs, release=release)
        # Arrays put for this call are freed with the next one.
        client._released.extend(puts)
        raws = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in hosts]
        inline = sum(r.nbytes for r in raws) <= INLINE_BYTES
        if inline:
            call.inline.extend(r.tobytes() for r in raws)
        call.client_start_unix_ns = started_unix
        call.client_enqueue_ns = time.perf_counter_ns() - started

        def messages():
            yield pb.SessionRequest(call=call)
            if inline:
                return
            progress = _Progress("uploading the arguments", sum(r.nbytes for r in raws))
            for index, (a, raw) in enumerate(zip(hosts, raws)):
                t = pb.ArrayType(dtype=a.dtype.name, dims=list(a.shape))
                for k, chunk in enumerate(_chunks(raw.data)):
                    progress.add(len(chunk.data))
                    yield pb.SessionRequest(input=pb.RunInput(index=index, type=t if k == 0 else None, chunk=chunk))

        # Until the server has surely taken the call, the client remembers
        # the arrays it takes (those it donates, JAX's donation, and those
        # put for it) with it, to take them back after a restart.
        taken = {a.array.array: client._origins.get(a.array.array) for a in arguments if a.HasField("array")}
        donated = [leaf._id for i, leaf in enumerate(leaves) if i in self._donate and isinstance(leaf, Array)]
        # The outputs are the client's as soon as the call is on its way (a
        # call sent again after a restart tells which it dropped since).
        origins = [(self._id, False, k) for k in range(len(outputs))]
        client._send_all(messages(), call=_Sent(taken, donated, dict(zip(outputs, origins))))
        for i, leaf in enumerate(leaves):
            if i in self._donate and isinstance(leaf, Array):
                leaf._deleted = True
                leaf._value = None
        arrays = [Array(client, a, layout, origin) for a, layout, origin in zip(outputs, self._outputs, origins)]
        client._submitted(time.perf_counter_ns() - started)
        return self._program.unflatten_outputs(arrays)

    def stats(self) -> dict:
        """The client's counters (see ``Client.stats``)."""
        return self._client.stats()

    def input(self, index: int) -> "Input":
        """Where input ``index`` goes: its shape, dtype and sharding, for
        ``Client.load`` to lay an array out as this executable takes it."""
        if not 0 <= index < len(self._inputs):
            raise ProgramError(f"{where()}: the program has inputs 0 to {len(self._inputs) - 1}, not {index}")
        return Input(self, index)


@dataclass(frozen=True)
class Input:
    """Input ``index`` of ``executable`` (``exe.input(i)``): a layout an
    array can be made in."""

    executable: Executable
    index: int

    @property
    def layout(self) -> "_Layout":
        return self.executable._inputs[self.index]


@dataclass(frozen=True)
class _Sent:
    """A call on its way: the arrays it takes (to present them again after
    a restart), those it donates, and those it makes (id -> origin)."""

    taken: dict
    donated: list
    made: dict


def _again(request):
    """A copy of `request` to send again after the session was taken back
    (a call marked so)."""
    if not request.HasField("call"):
        return request
    copy = pb.SessionRequest.FromString(request.SerializeToString())
    copy.call.again = True
    return copy


class _TakenBack(ServerError):
    """A request cut by a restart of the server (the session was taken
    back): whether it took effect is unknown."""


class _Pending:
    """A request's answer, filled in by the client's reader thread."""

    def __init__(self, client: "Client"):
        self._client = client
        self._done = threading.Event()
        self._error = None
        self._value = None
        # How to send it again after the session was taken back (None: it
        # fails then).
        self._again = None

    def _set(self, value=None, error: PwError | None = None):
        self._value, self._error = value, error
        self._done.set()

    def result(self):
        while not self._done.wait(1.0):
            if self._client._ended.is_set() and not self._done.is_set():
                raise self._client._end_error()
        if self._error is not None:
            raise type(self._error)(f"{where()}: {self._error}") from None
        return self._value


class _Fetch(_Pending):
    """A fetch's answer: the array's bytes, as the chunks arrive."""

    def __init__(self, client, array, nbytes, checksum):
        super().__init__(client)
        self.array, self.nbytes, self.checksum = array, nbytes, checksum
        self.buffer = None
        self.done_bytes = 0
        self.crc = 0

    def take(self, reply) -> bool:
        """Takes one reply; True once the fetch is answered."""
        if reply.error or reply.error_kind:
            self._set(error=_of_kind(reply.error_kind, reply.error))
            return True
        if reply.HasField("direct"):
            self._set(reply.direct)
            return True
        c = reply.chunk
        if self.buffer is None:
            if c.total != self.nbytes:
                self._set(error=ServerError(f"fetching array {self.array}: the server sent {c.total} bytes for {self.nbytes}"))
                return True
            self.buffer = bytearray(c.total)
        if c.offset != self.done_bytes or c.total != self.nbytes or self.done_bytes + len(c.data) > self.nbytes:
            self._set(error=ServerError(f"fetching array {self.array}: a chunk out of order"))
            return True
        self.buffer[self.done_bytes : self.done_bytes + len(c.data)] = c.data
        self.done_bytes += len(c.data)
        if self.checksum:
            self.crc = zlib.crc32(c.data, self.crc)
        if self.done_bytes < self.nbytes:
            return False
        if self.checksum and (not c.HasField("crc32") or (self.crc & 0xFFFFFFFF) != c.crc32):
            self._set(error=ServerError(f"fetching array {self.array}: checksum mismatch"))
        else:
            self._set(self.buffer)
        return True


class Client:
    """A session on a pw-server: a slice of its devices, held until
    ``close()`` (or until the process ends). Use ``pw.connect``."""

    def __init__(self, address: str, devices: int | None, timeout: float | None, token: str | None, name: str):
        self.address = address
        self._metadata = (("x-pw-token", token),) if token else ()
        self._channel = _channel.channel(address, options=_OPTIONS)
        # Arrays dropped by the program (from __del__, any thread), freed
        # with the next call.
        self._released: collections.deque[int] = collections.deque()
        self._closed = False
        self._ended = threading.Event()
        self._end_reason = None
        # One sender at a time: a call's messages stay together.
        self._sending = threading.Lock()
        self._next = itertools.count(1)
        self._next_array = itertools.count(CLIENT_ARRAYS)
        self._pending: dict[int, _Pending] = {}
        self._pending_lock = threading.Lock()
        # Taking the session back after the server restarted: what each
        # array the client holds is, the calls the server may not have
        # taken yet (with the arrays they donated), the arrays lost.
        self._origins: dict[int, tuple[int, bool, int]] = {}
        self._window: collections.deque = collections.deque(maxlen=WINDOW)
        # Calls sent on the current link (a window entry's last field is its
        # number, which `calls_logged` counts in).
        self._link_calls = 0
        self._lost: set[int] = set()
        self._generation = 0
        # How many times the link broke (a put on its way then is redone).
        self._breaks = 0
        self._reattached = threading.Condition()
        self._token = token
        self._name = name
        self._reconnect_s = float(os.environ.get(RECONNECT_ENV, RECONNECT_S))
        self._calls = 0
        self._submit_ns = 0
        # After a resume: where arrays and executables are now.
        self._placed: dict[int, tuple[int, ...]] = {}
        self._executables: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        open_request = pb.SessionRequest(
            open=pb.SessionOpen(
                protocol=PROTOCOL,
                name=name,
                devices=int(devices or 0),
                timeout_ms=int(timeout * 1000) if timeout else 0,
            )
        )
        self.position = None
        if os.environ.get(_channel.CA_ENV):
            # TLS: the server's port takes gRPC only.
            self._transport = _session.GrpcStream(
                address, open_request, self._metadata, _OPTIONS, lambda e: _error(e, address), QUEUED
            )
        else:
            open_request.open.token = token or ""
            self._transport = _session.Link(address, open_request, self._link_error, QUEUED)
        self._events = self._transport.events()
        try:
            granted = self._wait_in_line(open_request)
        except BaseException:
            self._transport.close()
            self._channel.close()
            raise
        self.position = None
        self.session = granted.session
        self._key = granted.key
        if not granted.journaled:
            # A server without a journal forgets the session when it goes.
            self._reconnect_s = 0.0
        # Every request naming the session presents its key.
        self._metadata = self._metadata + (("x-pw-session-key", granted.key),)
        self.devices = tuple(granted.devices)
        self._transport.heartbeat_s = max(granted.heartbeat_ms / 1000.0, 0.05)
        self._reader = threading.Thread(target=self._read_events, name=f"pw-session-{self.session}", daemon=True)
        self._reader.start()
        _OPEN.add(self)
        _OPENED.append(weakref.ref(self))

    def _wait_in_line(self, open_request):
        """Reads the server's events until the session is granted (printing
        its place in line); the grant. A client in line when a server with
        a journal restarts takes its place back with its ticket."""
        ticket, deadline = None, None
        while True:
            try:
                for event in self._events:
                    which = event.WhichOneof("event")
                    if which == "ticket":
                        ticket = event.ticket
                    elif which == "queued":
                        self.position = event.queued
                        print(
                            f"pw: waiting for devices at {self.address}: place {event.queued} in line",
                            file=sys.stderr,
                            flush=True,
                        )
                    elif which == "granted":
                        return event.granted
                raise ServerError(f"the pw-server at {self.address} ended the session before granting it")
            except _session.LinkBroken as e:
                if ticket is None or self._reconnect_s <= 0:
                    raise
                if deadline is None:
                    deadline = time.monotonic() + self._reconnect_s
                    print(f"pw: {e}; taking the place in line back", file=sys.stderr, flush=True)
                again = pb.SessionRequest()
                again.CopyFrom(open_request)
                again.open.session, again.open.key = ticket.session, ticket.key
                while True:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
                    try:
                        link = _session.Link(self.address, again, self._link_error, QUEUED)
                        break
                    except _session.LinkBroken:
                        continue
                self._transport.close()
                self._transport, self._events = link, link.events()

    def _link_error(self, code: int, kind: str, message: str) -> PwError:
        """The exception for the server ending a session link."""
        if code == grpc.StatusCode.UNAUTHENTICATED.value[0]:
            return ServerError(f"the pw-server at {self.address} refused the client: {message}")
        if code == grpc.StatusCode.UNAVAILABLE.value[0] and not kind:
            return _session.unreachable(self.address, message)
        return _of_kind(kind, message)

    # -- the session stream --------------------------------------------------

    def _read_events(self):
        try:
            while True:
                try:
                    for event in self._events:
                        if event.WhichOneof("event") == "reply":
                            self._answer(event.reply)
                    break
                except _session.LinkBroken as e:
                    self._breaks += 1
                    if self._closed or not self._reattach(e):
                        raise
        except PwError as e:
            if not self._closed and self._end_reason is None:
                self._end_reason = e
        finally:
            with self._reattached:
                self._generation += 1
                self._reattached.notify_all()
            self._ended.set()
            with self._pending_lock:
                pending, self._pending = list(self._pending.values()), {}
            for p in pending:
                p._set(error=self._end_error())

    def _answer(self, reply):
        # The server took every request sent before this one, and its
        # journal holds the first `calls_logged` calls of the link: those
        # are safe even if the server and a worker go away now (their
        # outputs kept on the workers, or computed again from the journal).
        window = self._window
        while window and window[0][0] < reply.id and window[0][3] <= reply.calls_logged:
            window.popleft()
        with self._pending_lock:
            p = self._pending.get(reply.id)
        if p is None:
            return
        finished = p.take(reply) if isinstance(p, _Fetch) else True
        if not isinstance(p, _Fetch):
            failed = reply.error or reply.error_kind
            p._set(
                reply.direct if reply.HasField("direct") else reply.resumed if reply.HasField("resumed") else None,
                error=_of_kind(reply.error_kind, reply.error) if failed else None,
            )
        if finished:
            with self._pending_lock:
                self._pending.pop(reply.id, None)

    def _end_error(self) -> PwError:
        if self._end_reason is not None:
            return self._end_reason
        if self._closed:
            return SessionError(f"the client is closed (session {self.session})")
        return ServerError(f"the pw-server at {self.address} ended session {self.session}")

    def _check_open(self):
        if self._closed:
            raise SessionError(f"{where()}: the client is closed (session {self.session})")
        if self._ended.is_set():
            raise type(self._end_error())(f"{where()}: {self._end_error()}")

    def _take_released(self) -> list[int]:
        taken = []
        while True:
            try:
                taken.append(self._released.popleft())
            except IndexError:
                return taken

    def _mint(self) -> int:
        return next(self._next_array)

    def _send(self, request):
        self._send_all((request,))

    def _send_all(self, requests, call: "_Sent | None" = None, pending=None):
        """Sends `requests` to the server, together and in order; waits
        while the server holds the session back (its calls in flight).
        A `call` is kept to be sent again if the server restarts before its
        journal surely holds it; what it donates and makes changes hands
        here, under the send lock, so that taking the session back sees
        the call and its arrays together. When the connection breaks, waits
        for the session to be taken back (which sends again what the
        server may have missed)."""
        self._check_open()
        requests = list(requests)
        with self._sending:
            generation = self._generation
            if call is not None:
                for a in call.donated:
                    self._origins.pop(a, None)
                self._origins.update(call.made)
                self._link_calls += 1
                self._window.append((next(self._next), requests, call.taken, self._link_calls))
            try:
                self._transport.send_all(requests)
                return
            except _session.LinkBroken:
                if self._reconnect_s <= 0:
                    raise
                if pending is not None and pending._again is None:
                    # It never reached the server: sent once the session
                    # is taken back.
                    pending._again = lambda _i, r=requests[0]: r
        self._await_reattach(generation)

    def _await_reattach(self, generation: int):
        """Waits until the reader thread took the session back (or gave
        up: then raises why)."""
        with self._reattached:
            self._reattached.wait_for(lambda: self._generation != generation or self._ended.is_set(), timeout=self._reconnect_s + 30)
        self._check_open()

    def _reattach(self, cause: PwError) -> bool:
        """Takes the session back from a pw-server restarted from its
        journal, within the reconnect timeout: sends again the calls it may
        have missed and the fetches and waits under way; fails the other
        requests under way. False when it cannot."""
        if self._reconnect_s <= 0:
            return False
        print(f"pw: {cause}; taking session {self.session} back", file=sys.stderr, flush=True)
        deadline = time.monotonic() + self._reconnect_s
        delay = 0.02
        while True:
            with self._sending:
                try:
                    granted = self._reopen()
                except _session.LinkBroken as e:
                    granted, cause = None, e
                except PwError as e:
                    print(f"pw: session {self.session} cannot be taken back: {e}", file=sys.stderr, flush=True)
                    self._end_reason = e
                    return False
                if granted is not None:
                    self._resend(granted)
                    break
            if time.monotonic() + delay > deadline:
                self._end_reason = ServerError(
                    f"session {self.session}: the pw-server at {self.address} did not come back within "
                    f"{self._reconnect_s:.0f} s ({RECONNECT_ENV}): {cause}"
                )
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        with self._reattached:
            self._generation += 1
            self._reattached.notify_all()
        return True

    def _reopen(self):
        """Opens a link presenting the session, its key and its arrays; the
        grant (the caller holds the send lock)."""
        held = dict(self._origins)
        for r in list(self._released):
            held.pop(r, None)
        for _, _, taken, _ in self._window:
            held.update({a: o for a, o in taken.items() if o is not None})
        open_request = pb.SessionRequest(
            open=pb.SessionOpen(
                protocol=PROTOCOL,
                name=self._name,
                token=self._token or "",
                session=self.session,
                key=self._key,
                arrays=[pb.ClientArray(array=a, executable=e, input=i, index=k) for a, (e, i, k) in held.items()],
            )
        )
        transport = _session.Link(self.address, open_request, self._link_error, QUEUED, self._transport.heartbeat_s)
        events = transport.events()
        try:
            for event in events:
                if event.WhichOneof("event") == "granted":
                    old, self._transport, self._events = self._transport, transport, events
                    old.close()
                    return event.granted
        except BaseException:
            transport.close()
            raise
        transport.close()
        raise _session.LinkBroken(f"the pw-server at {self.address} ended the link before taking session {self.session} back")

    def _resend(self, granted):
        """After the session was taken back: marks the arrays lost, sends
        again the calls of the window that make what the server lost (the
        server skips those that ran) and the fetches and waits under way;
        fails the rest under way."""
        self.devices = tuple(granted.devices)
        lost = set(granted.lost)
        released = set(self._released)

        def dropped(a):
            return a not in self._origins or a in released

        # From the last call back: a call is sent again when an array the
        # client holds, or one a call sent again takes, is lost and it
        # makes it (the calls that ran and made nothing lost are not).
        needed = {a for a in lost if not dropped(a)}
        window, given_up = [], []
        for entry in reversed(self._window):
            call = next(r.call for r in entry[1] if r.HasField("call"))
            if needed.intersection(call.outputs):
                window.append(entry)
                needed.update(a.array.array for a in call.arguments if a.HasField("array") and a.array.array in lost)
            else:
                # What it took and the client gave up (donated, put for it):
                # still there if it never ran.
                given_up.extend(a for a in entry[2] if dropped(a))
        window.reverse()
        remade = {o for _, requests, _, _ in window for r in requests if r.HasField("call") for o in r.call.outputs}
        # Arrays the program still holds (not those it donated to a call).
        self._lost.update(a for a in lost if a in self._origins and a not in remade)
        again = [pb.SessionRequest(delete=pb.SessionDelete(arrays=given_up))] if given_up else []
        self._window.clear()
        for n, (i, requests, taken, _) in enumerate(window, 1):
            requests = [_again(r) for r in requests]
            for r in requests:
                if r.HasField("call"):
                    # The outputs the client dropped since (not those a
                    # call sent again takes).
                    gone = (o for o in r.call.outputs if dropped(o) and o not in needed)
                    r.call.release.extend(o for o in gone if o not in r.call.release)
            again.extend(requests)
            # Numbered as the new link counts them.
            self._window.append((i, requests, taken, n))
        self._link_calls = len(window)
        with self._pending_lock:
            pending = list(self._pending.items())
        for i, p in pending:
            if p._again is not None:
                if isinstance(p, _Fetch):
                    p.buffer, p.done_bytes, p.crc = None, 0, 0
                again.append(p._again(i))
            else:
                with self._pending_lock:
                    self._pending.pop(i, None)
                p._set(error=_TakenBack(f"session {self.session}: the pw-server restarted while this request was under way; the session was taken back, try it again"))
        if again:
            self._transport.send_all(again)
        print(
            f"pw: session {self.session} taken back ({len(window)} calls sent again, {len(self._lost)} arrays lost)",
            file=sys.stderr,
            flush=True,
        )

    def _ask(self, build, pending=None, again: bool = False) -> _Pending:
        """Sends the request `build(id)` makes; its answer comes later.
        `again`: sent again (same id) if the session is taken back after
        a restart before it is answered (reads: fetches, waits)."""
        i = next(self._next)
        p = pending if pending is not None else _Pending(self)
        p._again = build if again else None
        with self._pending_lock:
            self._pending[i] = p
        try:
            self._send_all((build(i),), pending=p)
        except BaseException:
            with self._pending_lock:
                self._pending.pop(i, None)
            raise
        return p

    def _submitted(self, ns: int):
        self._calls += 1
        self._submit_ns += ns

    # -- requests --------------------------------------------------------------

    def _rpc(self, kind: str, method: str, request, reply_type):
        """Calls `method` of the controller, a `kind` ("unary_unary",
        "unary_stream") RPC, with the client's token and the session's key;
        its errors become pw's exceptions."""
        self._check_open()
        call = getattr(self._channel, kind)(
            _SERVICE + method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=reply_type.FromString,
        )
        try:
            return call(request, metadata=self._metadata)
        except grpc.RpcError as e:
            raise _error(e, self.address) from None

    def _unary(self, method, request, reply_type):
        return self._rpc("unary_unary", method, request, reply_type)

    def _unary_stream(self, method, request, reply_type):
        replies = self._rpc("unary_stream", method, request, reply_type)
        try:
            yield from replies
        except grpc.RpcError as e:
            raise _error(e, self.address) from None

    def _fetch(self, array: int, shape, dtype) -> np.ndarray:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        checksum = os.environ.get(CHECKSUM_ENV, "") not in ("", "0")
        direct = nbytes > DIRECT_BYTES and not checksum and self._direct()
        if direct:
            got = self._fetch_once(array, nbytes, checksum, direct=True)
            if not isinstance(got, pb.DirectShards):
                return np.frombuffer(got, dtype=dtype).reshape(shape)
            try:
                return _session.take_direct(got, shape, dtype)
            except (OSError, ServerError) as e:
                # A worker this client cannot reach (or one lost since):
                # through the server instead, which also recovers.
                print(f"pw: fetching array {array} from its workers failed ({e}); through the server", file=sys.stderr)
        got = self._fetch_once(array, nbytes, checksum, direct=False)
        return np.frombuffer(got, dtype=dtype).reshape(shape)

    def _direct(self) -> bool:
        """Whether this client moves large arrays straight between
        itself and the workers."""
        return not os.environ.get(_channel.CA_ENV) and os.environ.get(DIRECT_ENV, "1") != "0"

    def _put_direct(self, executable: int, index: int, a: np.ndarray, made: list) -> int | None:
        """Gives host argument `a` (input `index` of `executable`) straight
        to the workers when it is large: the array it became; None when it
        is sent with the call instead. Every array the server made for it
        joins `made` (the caller frees them after the call)."""
        if a.nbytes <= DIRECT_PUT_BYTES or not self._direct():
            return None
        for attempt in range(3):
            # A put the server's restart cut (its answer, or the bytes on
            # their way while the workers let go of the old server's
            # tickets) is made again as a new array.
            breaks = self._breaks
            array = self._mint()
            put = pb.SessionPut(executable=executable, input=index, array=array)

            def request(i, put=put):
                put.id = i
                return pb.SessionRequest(put=put)

            try:
                shards = self._ask(request).result()
            except _TakenBack:
                if attempt == 2:
                    raise
                continue
            if shards is None:
                return None
            made.append(array)
            try:
                _session.give_direct(shards, a)
            except (OSError, ServerError) as e:
                if self._breaks != breaks and attempt < 2:
                    continue
                print(f"pw: giving an argument to its workers failed ({e}); through the server", file=sys.stderr)
                return None
            if self._breaks == breaks:
                return array
        return None

    def _fetch_once(self, array: int, nbytes: int, checksum: bool, direct: bool):
        """One fetch request's answer: the bytes, or (``direct``) where
        they are."""
        pending = _Fetch(self, array, nbytes, checksum)
        request = lambda i: pb.SessionRequest(fetch=pb.SessionFetch(id=i, array=array, checksum=checksum, direct=direct))  # noqa: E731
        self._ask(request, pending, again=True)
        return pending.result()

    def sync(self) -> None:
        """Waits until the server has taken every request sent before (the
        calls are on their way; they need not have finished)."""
        self._ask(lambda i: pb.SessionRequest(wait=pb.SessionWait(id=i)), again=True).result()

    # -- the public API ------------------------------------------------------------

    def compile(self, program, *, schedule: str | None = None, donate_argnums=(), devices: int | None = None) -> Executable:
        """Lowers ``program`` onto this client's devices (``devices``: only
        that many of them) and compiles each computation once; returns the
        executable. Long compiles print progress to stderr."""
        donate = tuple(sorted({int(d) for d in (donate_argnums if isinstance(donate_argnums, (tuple, list)) else (donate_argnums,))}))
        request = pb.CompileProgramRequest(
            session=self.session,
            name=program.name,
            program=program.text(locations=True).encode(),
            schedule=check_schedule(schedule) or "",
            donate=list(donate),
            devices=int(devices or 0),
        )
        started = time.monotonic()
        compiled = None
        for reply in self._unary_stream("CompileProgram", request, pb.CompileProgramReply):
            if reply.WhichOneof("reply") == "progress":
                if time.monotonic() - started > 2.0:
                    print(f"pw: {reply.progress}", file=sys.stderr, flush=True)
            else:
                compiled = reply.program
        if compiled is None:
            raise ServerError(f"the pw-server at {self.address} ended the compile without an executable")
        return Executable(self, program, compiled, donate)

    def save(self, path: str, arrays: dict) -> None:
        """Writes ``arrays`` (name → pw.Array of this session) as the
        checkpoint ``path``, a relative path under the server's
        ``--checkpoint-dir`` (a local server's: ``$PW_CHECKPOINT_DIR``, else
        the directory the program started in). Each shard is written by
        the worker holding it, never through this client: a zarr v3 group
        with an array per name, which TensorStore and zarr-python open.
        Waits for the calls making the arrays; a checkpoint of that path is
        replaced whole once every shard is written and synced, and stays as
        it was if the save fails."""
        named = []
        for name, a in arrays.items():
            if not isinstance(a, Array) or a._client is not self:
                raise ArrayError(f"{where()}: {name!r} is not a pw.Array of this session (session {self.session})")
            a._check()
            named.append(pb.NamedArray(name=str(name), array=a._id))
        request = lambda i: pb.SessionRequest(save=pb.SessionSave(id=i, path=str(path), arrays=named))  # noqa: E731
        self._ask(request).result()

    def load(self, path: str, inputs: dict) -> dict:
        """Reads arrays of checkpoint ``path`` (see ``save``): ``inputs``
        maps each array's name to the layout it is made in, ``exe.input(i)``
        (as input ``i`` of ``exe`` takes it); returns name → pw.Array. The
        workers read the chunks each shard needs, whatever the writer's
        sharding: a zarr v3 array of that name under ``path`` loads, pw's,
        TensorStore's or Orbax's (``use_zarr3``, without OCDBT)."""
        pending = []
        for name, where_to in inputs.items():
            if not isinstance(where_to, Input) or where_to.executable._client is not self:
                raise ArrayError(f"{where()}: {name!r} must map to exe.input(i) of an executable of this client")
            array = self._mint()
            load = pb.SessionLoad(path=str(path), name=str(name), executable=where_to.executable._id, input=where_to.index, array=array)

            def request(i, load=load):
                load.id = i
                return pb.SessionRequest(load=load)

            pending.append((name, array, where_to.layout, self._ask(request)))
        out, failure = {}, None
        for name, array, layout, p in pending:
            try:
                p.result()
                out[name] = Array(self, array, layout, (where_to.executable._id, True, where_to.index))
            except PwError as e:
                failure = failure or e
        if failure is not None:
            for a in out.values():
                a.delete()
            raise failure
        return out

    def pause(self) -> None:
        """Frees this session's devices and keeps its work: once the calls
        sent before have finished, each worker writes the session's arrays
        it holds to the server's ``--checkpoint-dir`` (never through this
        client), frees them, and the devices go to the next client in line.
        The executables and arrays stay valid handles; until ``resume()``
        only ``delete`` works on them (the rest raise ``SessionError``
        saying the session is paused). A failed pause leaves the session as
        it was. Visible in ``pw-status`` and the status page."""
        self._ask(lambda i: pb.SessionRequest(pause=pb.SessionPause(id=i))).result()
        self.devices = ()

    def resume(self, devices: int | None = None, timeout: float | None = None) -> None:
        """Resumes a paused session on ``devices`` devices (default: as
        many as before), waiting in line up to ``timeout`` seconds (default:
        as long as it takes; ``DevicesBusyError`` after). Its executables
        are lowered onto the new slice (their computations come from the
        server's caches) and its arrays read back by the new slice's
        workers, each laid out as the same input or output of its
        executable; ``client.devices``, ``a.sharding`` and ``exe.inputs``
        say where they are now. An array that cannot be read back raises
        where it is used, as a lost one does."""
        resume = pb.SessionResume(devices=int(devices or 0), timeout_ms=int(timeout * 1000) if timeout else 0)

        def request(i):
            resume.id = i
            return pb.SessionRequest(resume=resume)

        self._moved(self._ask(request).result())

    def resize(self, devices: int, timeout: float | None = None) -> None:
        """Moves the session onto ``devices`` devices. Device to device
        when the slice can shrink, or grow by devices free now: its
        executables are lowered onto the new slice (computations from the
        server's caches) and each array laid out anew there, worker to
        worker, with no storage; the devices given up go to the line.
        Otherwise (the devices it needs are held) it is ``pause()`` and
        ``resume(devices, timeout)``, through the checkpoint directory.
        ``client.devices``, ``a.sharding`` and ``exe.inputs`` say where
        things are now."""
        resize = pb.SessionResize(devices=int(devices), timeout_ms=int(timeout * 1000) if timeout else 0)

        def request(i):
            resize.id = i
            return pb.SessionRequest(resize=resize)

        self._moved(self._ask(request).result())

    def _moved(self, placed) -> None:
        """Takes where a resume or a resize put the session's things."""
        self.devices = tuple(placed.devices)
        for a in placed.arrays:
            self._placed[a.array] = tuple(a.devices)
        for e in placed.executables:
            exe = self._executables.get(e.executable)
            if exe is not None:
                exe._place(e.inputs, e.outputs)

    def stats(self) -> dict:
        """What the session has cost: ``lowerings``, ``executables_compiled``,
        ``executables_from_cache``, ``calls``, bytes from and to the client
        and between the server and its workers, ``arrays_live``, the arrays
        lost with a worker that were computed again from their lineage
        (``arrays_recomputed``, by ``calls_replayed`` calls), and where a
        call's time goes: ``submit_us`` (in the client, per call),
        ``dispatch_us`` (on the server, from its message to its parts on
        their way) and ``run_us`` (from there to its outputs ready), each a
        mean over the calls so far. Counts every request sent before."""
        self.sync()
        c = self._unary("SessionStats", pb.SessionStatsRequest(session=self.session), pb.SessionCounters)
        out = {f.name: getattr(c, f.name) for f in c.DESCRIPTOR.fields}
        calls = max(c.calls, 1)
        out["submit_us"] = self._submit_ns / max(self._calls, 1) / 1e3
        out["dispatch_us"] = c.dispatch_ns / calls / 1e3
        out["run_us"] = c.run_ns / calls / 1e3
        return out

    def close(self) -> None:
        """Ends the session: its devices go to the next client in line, and
        every array it held is freed."""
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        self._transport.close()
        self._ended.wait(5.0)
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._closed else f"devices {list(self.devices)}"
        return f"pw.Client({self.address}, session {self.session}, {state})"


_OPEN: "weakref.WeakSet[Client]" = weakref.WeakSet()
# Clients in the order they opened (for `default_client`).
_OPENED: list = []


@atexit.register
def _close_all():
    for c in list(_OPEN):
        try:
            c.close()
        except Exception:
            pass


def connect(address: str | None = None, devices: int | None = None, timeout: float | None = None, *, token: str | None = None, name: str | None = None) -> Client:
    """Opens a session on the pw-server at ``address`` (``host:port``; by
    default ``$PW_SERVER``, else a local pw-server with one worker on the
    local CPU plugin, started for this process). ``devices`` asks for that
    many devices (default: every device); while they are held by other
    clients the call waits in line, for at most ``timeout`` seconds
    (DevicesBusyError). ``token`` (default ``$PW_TOKEN``) is the server's
    ``--token``."""
    if address is None:
        address = os.environ.get("PW_SERVER") or _local.address(devices)
    if token is None:
        token = os.environ.get("PW_TOKEN") or None
    if name is None:
        name = f"{os.path.basename(sys.argv[0]) or 'python'} (pid {os.getpid()})"
    return Client(address, devices, timeout, token, name)


_DEFAULT = None
_DEFAULT_LOCK = threading.Lock()


def open_client() -> Client | None:
    """The client this process opened last and has not closed, if any (one
    whose session the server ended counts as closed)."""
    with _DEFAULT_LOCK:
        _OPENED[:] = [r for r in _OPENED if r() is not None and not r()._closed and not r()._ended.is_set()]
        return _OPENED[-1]() if _OPENED else None


def default_client() -> Client:
    """The client ``p.compile()`` uses when given none: ``open_client()``,
    else a new ``connect()`` (every device of its server), kept open for
    the process."""
    global _DEFAULT
    client = open_client()
    if client is not None:
        return client
    with _DEFAULT_LOCK:
        _DEFAULT = connect()
        return _DEFAULT
