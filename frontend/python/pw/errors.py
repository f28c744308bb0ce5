"""Exceptions of the pw front end; each names the user's source line."""

from __future__ import annotations

import os
import sys

_JAX_DIR = os.sep + "jax" + os.sep
_PW_DIR = os.path.dirname(os.path.abspath(__file__))


class PwError(Exception):
    """Base class of every error the front end raises."""


class TracingError(PwError):
    """The traced block did something a pw program cannot capture."""


class ProgramError(PwError):
    """The program is malformed (meshes, inputs, outputs)."""


class ToolError(PwError):
    """pw-opt or pw-run failed; the message holds their diagnostics."""


def is_internal(path: str) -> bool:
    """Whether a source file belongs to JAX, jaxlib or this package."""
    path = os.path.abspath(path)
    return _JAX_DIR in path or "jaxlib" in path or path.startswith(_PW_DIR + os.sep)


def user_frame():
    """The innermost frame outside JAX and pw: the line the user wrote."""
    frame = sys._getframe(1)
    while frame is not None:
        if not is_internal(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def where() -> str:
    """`file:line` of the user's code, for messages."""
    frame = user_frame()
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"
