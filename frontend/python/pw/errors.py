"""Exceptions of the pw front end, and where the user's source line is
(each exception names it).

May import the standard library only."""

from __future__ import annotations

import itertools
import os
import sys
from types import FrameType, TracebackType

_JAX_DIR = os.sep + "jax" + os.sep
_PW_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames of `with` statements on generator-based context managers.
_CONTEXTLIB = os.path.abspath(sys.modules["contextlib"].__file__)


class PwError(Exception):
    """Base class of every error the front end raises."""


class TracingError(PwError):
    """The traced block did something a pw program cannot capture."""


class ProgramError(PwError):
    """The program is malformed (meshes, shardings, inputs, outputs)."""


class ToolError(PwError):
    """pw-opt, pw-run or the server's lowering failed; the message holds
    the diagnostics."""


class SessionError(PwError):
    """The client's session is gone (closed, its lease lapsed, or the
    server restarted)."""


class ServerError(PwError, ConnectionError):
    """The pw-server cannot be reached, or refused the client."""


class DevicesBusyError(PwError, TimeoutError):
    """The devices asked for stayed held by other clients past the
    timeout (or can never be had)."""


class AccessDeniedError(PwError, PermissionError):
    """The request names a session this client does not own."""


class LimitError(PwError):
    """The request is over one of the server's limits (a size, a session's
    quota); the message names the limit and the server flag that sets it."""


class ArrayError(PwError, ValueError):
    """An array that cannot be used here: another session's, deleted on
    the server, or the output of a failed call."""


class ArrayDeletedError(ArrayError, RuntimeError):
    """The array was deleted or donated (JAX: "Array has been deleted")."""


class RunError(PwError, RuntimeError):
    """A call failed on the devices (the message says where)."""


def in_jax(path: str) -> bool:
    """Whether a source file belongs to JAX or jaxlib."""
    path = os.path.abspath(path)
    return _JAX_DIR in path or "jaxlib" in path


def is_internal(path: str) -> bool:
    """Whether a source file belongs to JAX, jaxlib, contextlib or this package."""
    path = os.path.abspath(path)
    return in_jax(path) or path.startswith(_PW_DIR + os.sep) or path == _CONTEXTLIB


def user_frame() -> FrameType | None:
    """The innermost frame outside JAX and pw: the line the user wrote."""
    frame = sys._getframe(1)
    while frame is not None:
        if not is_internal(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def position(frame: FrameType | None) -> tuple[str, int, int]:
    """(file, line, column) of a frame's current instruction; the column is
    1-based, 1 when Python does not know it."""
    if frame is None:
        return ("<unknown>", 0, 0)
    line = frame.f_lineno
    column = 1
    try:
        pos = next(itertools.islice(frame.f_code.co_positions(), frame.f_lasti // 2, None))
        if pos[0] == line and pos[2] is not None:
            column = pos[2] + 1
    except (StopIteration, AttributeError, ValueError):
        pass
    return (frame.f_code.co_filename, line, column)


def where() -> str:
    """`file:line` of the user's code, for messages."""
    frame = user_frame()
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def where_raised(tb: TracebackType | None) -> str:
    """`file:line` of the innermost user frame of a traceback: the line of
    the user's code that led to an exception raised inside JAX."""
    found = None
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            found = tb
        tb = tb.tb_next
    if found is None:
        return where()
    return f"{found.tb_frame.f_code.co_filename}:{found.tb_lineno}"
