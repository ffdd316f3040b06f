"""mentat's exceptions: one class per code of the C API (``mentat_code``).

Every error that mentat reports is a :class:`Error` with the numeric ``code``, its
``code_name`` (``"parse error"``) and the message mentat gave. The subclass depends on the
code, so callers can catch exactly what they expect::

    try:
        conn.transact('[{:no/such "attribute"}]')
    except mentat.SchemaError as e:
        print(e.code, e.code_name, e.message)
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Type

__all__ = [
    "Error",
    "InvalidArgument",
    "ParseError",
    "NotFoundError",
    "SchemaError",
    "ConflictError",
    "CasMismatchError",
    "BusyError",
    "Interrupted",
    "IoError",
    "CorruptError",
    "UnsupportedError",
    "InternalError",
    "AuthError",
    "error_for_code",
    "CODE_NAMES",
]

#: The short names mentat_code_name() gives, by code (used when the library is not at
#: hand, e.g. for errors raised by the Python EDN reader).
CODE_NAMES: Dict[int, str] = {
    0: "ok",
    1: "invalid argument",
    2: "parse error",
    3: "not found",
    4: "schema error",
    5: "conflict",
    6: "cas mismatch",
    7: "busy",
    8: "interrupted",
    9: "i/o error",
    10: "corrupt",
    11: "unsupported",
    12: "internal error",
}

_POS_RE = re.compile(r"(?<![\d:])(\d+):(\d+):")


class Error(Exception):
    """An error reported by mentat.

    Attributes:
        code: the ``mentat_code`` number (1 to 12).
        code_name: its short name, as ``mentat_code_name`` gives it.
        message: mentat's message (with line:column for EDN and query errors).
    """

    #: The code this class stands for (the base class: none in particular).
    CODE: int = 0

    #: The HTTP status of the answer, for errors a mentat server (``connect("http://...")``)
    #: answered with; None otherwise.
    http_status: Optional[int] = None

    def __init__(self, message: str, code: Optional[int] = None,
                 code_name: Optional[str] = None) -> None:
        super().__init__(message)
        self.code: int = self.CODE if code is None else int(code)
        self.code_name: str = (code_name if code_name is not None
                               else CODE_NAMES.get(self.code, "unknown code"))
        self.message: str = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return "%s(%r, code=%d)" % (type(self).__name__, self.message, self.code)


class InvalidArgument(Error, ValueError):
    """Bad input from the caller (MENTAT_INVALID_ARGUMENT), e.g. a closed connection or an
    unknown option."""

    CODE = 1


class ParseError(Error, ValueError):
    """Text that does not parse (MENTAT_PARSE).

    ``line`` and ``column`` are the 1-based position mentat named in the message (the first
    ``L:C:`` in it), or None when it named none.
    """

    CODE = 2

    def __init__(self, message: str, code: Optional[int] = None,
                 code_name: Optional[str] = None) -> None:
        super().__init__(message, code, code_name)
        m = _POS_RE.search(message)
        self.line: Optional[int] = int(m.group(1)) if m else None
        self.column: Optional[int] = int(m.group(2)) if m else None


class NotFoundError(Error, LookupError):
    """An entity, attribute, ident or file that does not exist (MENTAT_NOT_FOUND)."""

    CODE = 3


class SchemaError(Error):
    """A schema violation: an unknown attribute, a value of the wrong type (MENTAT_SCHEMA)."""

    CODE = 4


class ConflictError(Error):
    """A uniqueness or cardinality conflict (MENTAT_CONFLICT)."""

    CODE = 5


class CasMismatchError(Error):
    """``:db/cas`` found another value than the expected one (MENTAT_CAS_MISMATCH)."""

    CODE = 6


class BusyError(Error):
    """The database is locked (MENTAT_BUSY)."""

    CODE = 7


class Interrupted(Error):
    """``Connection.interrupt()`` or a timeout stopped the work (MENTAT_INTERRUPTED)."""

    CODE = 8


class IoError(Error, OSError):
    """The file system, SQLite or PostgreSQL failed (MENTAT_IO)."""

    CODE = 9


class CorruptError(Error):
    """Not a mentat store, or a damaged one (MENTAT_CORRUPT)."""

    CODE = 10


class UnsupportedError(Error):
    """A newer store version, or a feature not available here (MENTAT_UNSUPPORTED)."""

    CODE = 11


class InternalError(Error):
    """A bug in mentat (MENTAT_INTERNAL)."""

    CODE = 12


class AuthError(Error, PermissionError):
    """A mentat server refused the request's token (HTTP 401: missing or not valid) or its
    access (403: a read-only token on a write). Not a mentat_code: ``code`` is 0,
    ``code_name`` the server's (``"unauthorized"``, ``"forbidden"``)."""

    CODE = 0

    def __init__(self, message: str, code: Optional[int] = None,
                 code_name: Optional[str] = None) -> None:
        Error.__init__(self, message, code, code_name if code_name is not None
                       else "unauthorized")


_BY_CODE: Dict[int, Type[Error]] = {
    cls.CODE: cls
    for cls in (InvalidArgument, ParseError, NotFoundError, SchemaError, ConflictError,
                CasMismatchError, BusyError, Interrupted, IoError, CorruptError,
                UnsupportedError, InternalError)
}


def error_for_code(code: int, message: str, code_name: Optional[str] = None) -> Error:
    """The exception for a mentat_code and message (an :class:`Error` subclass instance)."""
    cls = _BY_CODE.get(int(code), Error)
    return cls(message, int(code), code_name)
