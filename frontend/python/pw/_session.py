"""How a client's session reaches pw-server: the two transports of its
requests and of the server's events, with one interface (``send_all``,
``events``, ``close``).

* ``Link`` (the default): a session link, framed messages on one plain TCP
  connection to the server's port (``pw_wire::net::SESSION_LINK_MAGIC``,
  then a little-endian u32 length and a message, each way). A request is
  one ``sendall``; a reader thread takes the events. The server's token
  travels in the ``open`` message.
* ``GrpcStream``: the gRPC ``Session`` stream, for a server that speaks TLS
  (``$PW_TLS_CA``), whose port takes no plain connection.

``take_direct`` and ``give_direct`` take a direct fetch's shards from, and
give a direct put's shards to, the workers' data ports (``pw_wire::bulk``):
the magic and the ticket, then a little-endian u64 length and the bytes
(received into the array's memory, sent from it), and for a put the
worker's word that the shard is stored.

May import errors, _channel and _proto only."""

from __future__ import annotations

import queue
import socket
import struct
import threading
import time

import grpc
import numpy as np

from . import _channel
from ._proto import pb
from .errors import ServerError

MAGIC = b"pw-link1"
BULK_MAGIC = b"pw-bulk1"
_BULK_FAILED = (1 << 64) - 1
_BULK_STORED, _BULK_SEND = 0, 1
_U64 = struct.Struct("<Q")
_LEN = struct.Struct("<I")
# The largest message the server sends on a link (pw_wire::MAX_MESSAGE_BYTES).
MAX_MESSAGE = 256 << 20
_SERVICE = "/pw.v1.Controller/Session"


class LinkBroken(ServerError):
    """The connection to the pw-server broke without the server ending the
    session (it stopped, restarted, or the network failed): a client may
    take its session back from a server restarted with ``--state-dir``."""


def unreachable(address: str, why) -> ServerError:
    """The error of a pw-server at `address` that cannot be reached."""
    return LinkBroken(f"the pw-server at {address} cannot be reached (it stopped or restarted?): {why}")


def frame(message) -> bytes:
    data = message.SerializeToString()
    return _LEN.pack(len(data)) + data


class Link:
    """A session link (see the module doc); ``error_of(code, kind,
    message)`` turns the server's last word into an exception.

    Requests are framed by the caller. When nothing is waiting to be
    written, the caller writes its requests itself, as far as the socket
    takes them without blocking (no thread to wake: a tiny call costs one
    ``send``); the rest, and everything sent while something waits, goes
    to one sender thread, which writes everything queued by the time it
    wakes in one ``sendall`` and a heartbeat when nothing else went for a
    while. Requests keep their order either way: a caller writes only
    while nothing is queued, under the lock the sender writes under. At
    most ``queued`` requests wait; past that a caller waits (the server
    holds a session back while it has too many calls in flight)."""

    def __init__(self, address: str, open_request, error_of, queued: int, heartbeat_s: float = 1.0):
        host, _, port = address.rpartition(":")
        self.address = address
        self._error_of = error_of
        try:
            self._sock = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except OSError as e:
            raise unreachable(address, e) from None
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.heartbeat_s = heartbeat_s
        self._closed = threading.Event()
        self._queue: queue.Queue = queue.Queue(maxsize=queued)
        # Held while writing to the socket; `_waiting` counts what is
        # queued or taken by the sender and not yet written.
        self._writing = threading.Lock()
        self._waiting = 0
        self._last_write = 0.0
        self._failed: ServerError | None = None
        # Set once the sender wrote its last request (close).
        self._drained = threading.Event()
        try:
            self._sock.sendall(MAGIC + frame(open_request))
        except OSError as e:
            self._sock.close()
            raise unreachable(address, e) from None
        threading.Thread(target=self._send, name="pw-send", daemon=True).start()

    def send_all(self, requests) -> None:
        data = b"".join(frame(r) for r in requests)
        while not self._writing.acquire(timeout=1.0):
            self._check_open()
        try:
            self._check_open()
            if self._waiting == 0:
                try:
                    sent = self._sock.send(data, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    sent = 0
                except OSError as e:
                    self._failed = unreachable(self.address, e)
                    raise self._failed from None
                self._last_write = time.monotonic()
                if sent == len(data):
                    return
                data = data[sent:]
            # Queued under the lock: a request that went out in part keeps
            # its place before anything sent after it.
            self._waiting += 1
            while True:
                try:
                    self._queue.put(data, timeout=1.0)
                    return
                except queue.Full:
                    self._check_open()
        finally:
            self._writing.release()

    def _check_open(self) -> None:
        if self._failed is not None:
            raise self._failed
        if self._closed.is_set():
            raise ServerError(f"the session link to {self.address} is closed")

    def _send(self):
        beat = frame(pb.SessionRequest(heartbeat=True))
        while not self._closed.is_set():
            try:
                batch = [self._queue.get(timeout=self.heartbeat_s / 2)]
            except queue.Empty:
                if time.monotonic() - self._last_write < self.heartbeat_s / 2:
                    continue
                batch = []
            with self._writing:
                # Taken under the lock: what a caller queued after writing
                # part of a request must follow that part, before a beat.
                while True:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                last = None in batch
                if last:
                    batch = batch[: batch.index(None)]
                try:
                    self._sock.sendall(b"".join(batch) if batch or last else beat)
                except OSError as e:
                    self._failed = unreachable(self.address, e)
                    self._drained.set()
                    return
                self._last_write = time.monotonic()
                self._waiting -= len(batch)
            if last:
                self._drained.set()
                return

    def _read(self, n: int) -> bytearray:
        buffer = bytearray(n)
        view = memoryview(buffer)
        got = 0
        while got < n:
            k = self._sock.recv_into(view[got:], n - got)
            if k == 0:
                raise EOFError
            got += k
        return buffer

    def events(self):
        """The server's events, in order; raises the server's error when it
        ends the session, ServerError when the connection breaks."""
        while True:
            try:
                (n,) = _LEN.unpack(self._read(4))
                if n > MAX_MESSAGE:
                    raise ServerError(f"the pw-server at {self.address} sent a message of {n} bytes")
                event = pb.SessionEvent.FromString(bytes(self._read(n)))
            except (EOFError, OSError) as e:
                if self._closed.is_set():
                    return
                raise unreachable(self.address, str(e) or "the connection closed") from None
            if event.WhichOneof("event") == "ended":
                e = event.ended
                raise self._error_of(e.code, e.error_kind, e.error)
            yield event

    def close(self) -> None:
        """Ends the session once what was sent is written: the server sees
        the link close."""
        try:
            self._queue.put(None, timeout=5.0)
        except queue.Full:
            pass
        self._drained.wait(5.0)
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


def _recv_into(sock, view: memoryview, address: str) -> None:
    got = 0
    while got < len(view):
        k = sock.recv_into(view[got:], min(len(view) - got, 16 << 20))
        if k == 0:
            raise ServerError(f"the worker at {address} closed the connection after {got} of {len(view)} bytes")
        got += k


def _connect(shard, timeout: float):
    host, _, port = shard.address.rpartition(":")
    sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _answer(sock, shard, what: str) -> int:
    """The worker's u64 answer; its refusal as a ServerError."""
    head = bytearray(8)
    _recv_into(sock, memoryview(head), shard.address)
    (n,) = _U64.unpack(head)
    if n == _BULK_FAILED:
        size = bytearray(4)
        _recv_into(sock, memoryview(size), shard.address)
        why = bytearray(min(_LEN.unpack(size)[0], 4096))
        _recv_into(sock, memoryview(why), shard.address)
        raise ServerError(f"the worker at {shard.address} could not {what} a shard: {why.decode(errors='replace')}")
    return n


def _region(shard):
    return tuple(slice(int(a), int(a) + int(d)) for a, d in zip(shard.start, shard.dims))


def _give_shard(shard, array: np.ndarray, timeout: float) -> None:
    data = np.ascontiguousarray(array[_region(shard)])
    with _connect(shard, timeout) as sock:
        sock.sendall(BULK_MAGIC + shard.ticket + _U64.pack(data.nbytes))
        if _answer(sock, shard, "take") != _BULK_SEND:
            raise ServerError(f"the worker at {shard.address} did not take a shard")
        sock.sendall(memoryview(data.reshape(-1).view(np.uint8)))
        if _answer(sock, shard, "take") != _BULK_STORED:
            raise ServerError(f"the worker at {shard.address} did not store a shard")


def _take_shard(shard, out: np.ndarray, whole: bool, timeout: float) -> None:
    dims = tuple(int(d) for d in shard.dims)
    with _connect(shard, timeout) as sock:
        sock.sendall(BULK_MAGIC + shard.ticket)
        n = _answer(sock, shard, "give")
        place = out if whole else out[_region(shard)]
        # Received where it goes when that is one block of memory (a whole
        # array, a split along its first axis), else next to it and copied.
        target = place if place.flags.c_contiguous else np.empty(dims, out.dtype)
        if n != target.nbytes:
            raise ServerError(f"the worker at {shard.address} sent {n} bytes for a shard of {target.nbytes}")
        _recv_into(sock, memoryview(target.reshape(-1).view(np.uint8)), shard.address)
    if target is not place:
        place[...] = target


def _each(shards, f) -> None:
    """`f(shard)` for each shard, on a thread each when there are
    several; the first OSError or ServerError is raised."""
    if len(shards) == 1:
        f(shards[0])
        return
    errors = []

    def one(s):
        try:
            f(s)
        except (OSError, ServerError) as e:
            errors.append(e)

    threads = [threading.Thread(target=one, args=(s,), daemon=True) for s in shards]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def take_direct(direct, shape, dtype, timeout: float = 30.0) -> np.ndarray:
    """The array a direct fetch (``pb.DirectShards``) describes, taken
    from the workers; an OSError or ServerError when a worker cannot be
    reached or refuses."""
    out = np.empty(shape, dtype)
    shards = list(direct.shards)
    whole = len(shards) == 1 and tuple(shards[0].dims) == tuple(shape)
    _each(shards, lambda s: _take_shard(s, out, whole, timeout))
    return out


def give_direct(direct, array: np.ndarray, timeout: float = 30.0) -> None:
    """Gives each shard of a direct put (``pb.DirectShards``) of `array`
    to its worker, returning once every worker stored its shard; an
    OSError or ServerError when a worker cannot be reached or refuses."""
    _each(list(direct.shards), lambda s: _give_shard(s, array, timeout))


class GrpcStream:
    """The gRPC ``Session`` stream (see the module doc); ``error_of(e)``
    turns a gRPC error into pw's exception."""

    def __init__(self, address: str, open_request, metadata, options, error_of, queued: int, heartbeat_s: float = 1.0):
        self.address = address
        self._error_of = error_of
        self.heartbeat_s = heartbeat_s
        self._requests: queue.Queue = queue.Queue(maxsize=queued)
        self._requests.put(open_request)
        self._channel = _channel.channel(address, options=options)
        self._events = self._channel.stream_stream(
            _SERVICE,
            request_serializer=pb.SessionRequest.SerializeToString,
            response_deserializer=pb.SessionEvent.FromString,
        )(self._outgoing(), metadata=metadata)
        self._ended = threading.Event()

    def _outgoing(self):
        while True:
            try:
                item = self._requests.get(timeout=self.heartbeat_s)
            except queue.Empty:
                item = pb.SessionRequest(heartbeat=True)
            if item is None:
                return
            yield item

    def send_all(self, requests) -> None:
        for r in requests:
            while True:
                try:
                    self._requests.put(r, timeout=1.0)
                    break
                except queue.Full:
                    if self._ended.is_set():
                        raise ServerError(f"the pw-server at {self.address} ended the session") from None

    def events(self):
        try:
            yield from self._events
        except grpc.RpcError as e:
            raise self._error_of(e) from None
        finally:
            self._ended.set()

    def close(self) -> None:
        try:
            self._requests.put(None, timeout=5.0)
        except queue.Full:
            pass
        self._ended.wait(5.0)
        self._channel.close()

