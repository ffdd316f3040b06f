"""The ctypes layer over libmentat (include/mentat/mentat.h): the embedded backend.

Everything here deals in text: EDN and JSON strings in, EDN strings out. The Python-level
classes (``connection.py``) convert values; another backend (an HTTP client, later) only
has to offer the same small classes: a store (:class:`NativeStore`), database values
(:class:`NativeDb`), prepared queries (:class:`NativePrepared`) and listeners
(:class:`NativeListener`).

Finding the library, in order: the environment variable ``MENTAT_LIBRARY`` (a path); next to
an installed package (``PREFIX/lib/libmentat.so.0`` and ``PREFIX/lib/<multiarch>/``
for a package in ``PREFIX/lib/python3*/{dist,site}-packages/mentat``); the source tree
(``python/mentat`` -> ``build/src/libmentat.so.0``); then the dynamic loader
(``ctypes.util.find_library("mentat")``, ``libmentat.so.0``). The library is loaded on
first use, not on ``import mentat``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
import sysconfig
import threading
from ctypes import (CFUNCTYPE, POINTER, byref, c_char_p, c_int, c_int64, c_void_p)
from typing import Any, Callable, List, Optional, Tuple

from .errors import Error, InvalidArgument, error_for_code

__all__ = ["library", "library_path", "version", "code_name", "NativeStore", "NativeDb",
           "NativePrepared", "NativeListener", "EDN", "JSON", "INT64_MIN"]

EDN = 0
JSON = 1
INT64_MIN = -(1 << 63)
_LIB_NAME = "libmentat.so.0"

_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None
_lib_lock = threading.Lock()

LISTEN_FN = CFUNCTYPE(None, c_void_p, c_char_p)


def _candidates() -> List[Tuple[str, str]]:
    """(how, path-or-name) pairs to try, in order."""
    out: List[Tuple[str, str]] = []
    env = os.environ.get("MENTAT_LIBRARY")
    if env:
        out.append(("MENTAT_LIBRARY", env))
    pkg = os.path.dirname(os.path.abspath(__file__))
    # PREFIX/lib/python3/dist-packages/mentat -> PREFIX/lib
    libdir = os.path.normpath(os.path.join(pkg, "..", "..", ".."))
    out.append(("installed", os.path.join(libdir, _LIB_NAME)))
    multiarch = sysconfig.get_config_var("MULTIARCH")
    seen = set()
    if multiarch:
        p = os.path.join(libdir, multiarch, _LIB_NAME)
        seen.add(p)
        out.append(("installed", p))
    for p in sorted(glob.glob(os.path.join(libdir, "*-linux-gnu*", _LIB_NAME))):
        if p not in seen:
            out.append(("installed", p))
    # The source tree: python/mentat -> build/src.
    out.append(("source tree", os.path.normpath(os.path.join(pkg, "..", "..", "build", "src",
                                                             _LIB_NAME))))
    found = ctypes.util.find_library("mentat")
    if found:
        out.append(("find_library", found))
    out.append(("loader", _LIB_NAME))
    return out


def _declare(lib: ctypes.CDLL) -> None:
    """Argument and result types of every entry point. Strings returned by the library
    are declared c_void_p, so that they can be passed back to mentat_free."""
    pp = POINTER(c_void_p)
    sigs = {
        "mentat_version": (c_char_p, []),
        "mentat_code_name": (c_char_p, [c_int]),
        "mentat_free": (None, [c_void_p]),
        "mentat_open": (c_int, [c_char_p, c_char_p, pp, pp]),
        "mentat_close": (None, [c_void_p]),
        "mentat_interrupt": (None, [c_void_p]),
        "mentat_last_tx": (c_int, [c_void_p, POINTER(c_int64), pp]),
        "mentat_transact": (c_int, [c_void_p, c_char_p, c_int, pp, pp]),
        "mentat_with": (c_int, [c_void_p, c_char_p, c_int, pp, pp]),
        "mentat_db_current": (c_int, [c_void_p, pp, pp]),
        "mentat_db_as_of": (c_int, [c_void_p, c_int64, c_int64, pp, pp]),
        "mentat_db_since": (c_int, [c_void_p, c_int64, c_int64, pp, pp]),
        "mentat_db_history": (c_int, [c_void_p, pp, pp]),
        "mentat_db_basis_t": (c_int64, [c_void_p]),
        "mentat_db_free": (None, [c_void_p]),
        "mentat_q": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_int, pp, pp]),
        "mentat_db_q": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_int, pp, pp]),
        "mentat_query_columns": (c_int, [c_char_p, c_int, pp, pp]),
        "mentat_db_explain": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, pp, pp]),
        "mentat_prepare": (c_int, [c_void_p, c_char_p, pp, pp]),
        "mentat_prepared_run": (c_int, [c_void_p, c_char_p, c_char_p, c_int, pp, pp]),
        "mentat_prepared_free": (None, [c_void_p]),
        "mentat_pull": (c_int, [c_void_p, c_char_p, c_char_p, c_int, pp, pp]),
        "mentat_entity": (c_int, [c_void_p, c_char_p, c_int, pp, pp]),
        "mentat_datoms": (c_int, [c_void_p, c_char_p, c_char_p, c_int, pp, pp]),
        "mentat_listen": (c_int, [c_void_p, c_char_p, LISTEN_FN, c_void_p, pp, pp]),
        "mentat_listener_free": (None, [c_void_p]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def library() -> ctypes.CDLL:
    """The loaded libmentat (loading it on the first call). Raises ``OSError`` naming every
    place it looked when none loads."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried: List[str] = []
        for how, path in _candidates():
            if os.sep in path and not os.path.exists(path):
                if how == "MENTAT_LIBRARY":
                    raise OSError("mentat: MENTAT_LIBRARY names %s, which does not exist"
                                  % path)
                tried.append("%s: %s (no such file)" % (how, path))
                continue
            try:
                lib = ctypes.CDLL(path)
                _declare(lib)
            except (OSError, AttributeError) as e:
                tried.append("%s: %s (%s)" % (how, path, e))
                if how == "MENTAT_LIBRARY":
                    raise OSError("mentat: cannot load the library MENTAT_LIBRARY names, %s: %s"
                                  % (path, e)) from None
                continue
            _lib, _lib_path = lib, path
            return lib
        raise OSError("mentat: cannot find libmentat.so.0; set MENTAT_LIBRARY to its path. "
                      "Looked in:\n  " + "\n  ".join(tried))


def library_path() -> str:
    """The path (or loader name) libmentat was loaded from."""
    library()
    assert _lib_path is not None
    return _lib_path


def version() -> str:
    """libmentat's version, ``"MAJOR.MINOR.PATCH"``."""
    return library().mentat_version().decode("utf-8")


def code_name(code: int) -> str:
    """mentat_code_name(code): ``"parse error"``."""
    return library().mentat_code_name(int(code)).decode("utf-8")


def _enc(s: Optional[str]) -> Optional[bytes]:
    if s is None:
        return None
    return s.encode("utf-8")


def _take(lib: ctypes.CDLL, p: c_void_p) -> str:
    """The text at `p` (a string the library returned), freed."""
    if not p.value:
        return ""
    try:
        return ctypes.string_at(p.value).decode("utf-8", "replace")
    finally:
        lib.mentat_free(p)


def _raise(lib: ctypes.CDLL, code: int, err: c_void_p) -> None:
    msg = _take(lib, err) if err.value else ""
    try:
        name = lib.mentat_code_name(code).decode("utf-8")
    except Exception:  # pragma: no cover - a static string
        name = None
    raise error_for_code(code, msg or (name or "error %d" % code), name)


def _call_text(fn: Any, *args: Any) -> str:
    """Calls `fn(*args, &out, &err)` and returns *out as text, or raises."""
    lib = library()
    out = c_void_p()
    err = c_void_p()
    code = fn(*args, byref(out), byref(err))
    if code != 0:
        if out.value:  # never on an error, but do not leak it if it were
            lib.mentat_free(out)
        _raise(lib, code, err)
    return _take(lib, out)


def _call_handle(fn: Any, *args: Any) -> int:
    """Calls `fn(*args, &handle, &err)` and returns the handle (an address), or raises."""
    lib = library()
    out = c_void_p()
    err = c_void_p()
    code = fn(*args, byref(out), byref(err))
    if code != 0:
        _raise(lib, code, err)
    if not out.value:
        raise Error("mentat returned no handle", 12)
    return out.value


class _Guard:
    """Counts the calls using a handle, so that it is freed only when none runs (the C API
    forbids freeing a handle while another thread uses it)."""

    __slots__ = ("ptr", "users", "closed", "cond", "what")

    def __init__(self, ptr: int, what: str) -> None:
        self.ptr = ptr
        self.users = 0
        self.closed = False
        self.cond = threading.Condition(threading.Lock())
        self.what = what

    def acquire(self) -> int:
        with self.cond:
            if self.closed:
                raise InvalidArgument("the %s is closed" % self.what)
            self.users += 1
            return self.ptr

    def release(self) -> None:
        with self.cond:
            self.users -= 1
            if self.closed and self.users == 0:
                self.cond.notify_all()

    def close(self) -> Optional[int]:
        """Marks the handle closed, waits for the calls using it, and returns it (None when
        it was closed before)."""
        with self.cond:
            if self.closed:
                return None
            self.closed = True
            while self.users:
                self.cond.wait()
            return self.ptr


class NativeStore:
    """An open mentat_store."""

    def __init__(self, path: str, options_json: Optional[str]) -> None:
        lib = library()
        ptr = _call_handle(lib.mentat_open, _enc(path), _enc(options_json))
        self._guard = _Guard(ptr, "connection")
        self.path = path

    @property
    def closed(self) -> bool:
        return self._guard.closed

    def close(self) -> None:
        ptr = self._guard.close()
        if ptr:
            library().mentat_close(ptr)

    def interrupt(self) -> None:
        ptr = self._guard.acquire()
        try:
            library().mentat_interrupt(ptr)
        finally:
            self._guard.release()

    def last_tx(self) -> int:
        lib = library()
        ptr = self._guard.acquire()
        try:
            out = c_int64()
            err = c_void_p()
            code = lib.mentat_last_tx(ptr, byref(out), byref(err))
            if code != 0:
                _raise(lib, code, err)
            return out.value
        finally:
            self._guard.release()

    def transact(self, edn: str, speculative: bool = False) -> str:
        lib = library()
        ptr = self._guard.acquire()
        try:
            fn = lib.mentat_with if speculative else lib.mentat_transact
            return _call_text(fn, ptr, _enc(edn), EDN)
        finally:
            self._guard.release()

    def q(self, query: str, inputs_edn: Optional[str], options_json: Optional[str]) -> str:
        lib = library()
        ptr = self._guard.acquire()
        try:
            return _call_text(lib.mentat_q, ptr, _enc(query), _enc(inputs_edn),
                              _enc(options_json), EDN)
        finally:
            self._guard.release()

    def db(self) -> "NativeDb":
        lib = library()
        ptr = self._guard.acquire()
        try:
            return NativeDb(_call_handle(lib.mentat_db_current, ptr))
        finally:
            self._guard.release()

    def query_columns(self, query: str) -> str:
        lib = library()
        return _call_text(lib.mentat_query_columns, _enc(query), EDN)

    def listen(self, attributes_edn: Optional[str],
               callback: Callable[[str], None]) -> "NativeListener":
        """Calls `callback(report_edn_text)` on the listener thread for each commit."""
        lib = library()
        ptr = self._guard.acquire()
        try:
            listener = NativeListener(callback)
            listener._ptr = _call_handle(lib.mentat_listen, ptr, _enc(attributes_edn),
                                         listener._cfn, None)
            return listener
        finally:
            self._guard.release()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class NativeDb:
    """A mentat_db: an immutable database value, freed when garbage-collected."""

    def __init__(self, ptr: int) -> None:
        self._ptr = ptr

    def as_of(self, tx: Optional[int], micros: int = 0) -> "NativeDb":
        """As of the transaction `tx`, or (tx None) of the instant `micros`."""
        lib = library()
        return NativeDb(_call_handle(lib.mentat_db_as_of, self._ptr,
                                     INT64_MIN if tx is None else tx, micros))

    def since(self, tx: Optional[int], micros: int = 0) -> "NativeDb":
        lib = library()
        return NativeDb(_call_handle(lib.mentat_db_since, self._ptr,
                                     INT64_MIN if tx is None else tx, micros))

    def history(self) -> "NativeDb":
        lib = library()
        return NativeDb(_call_handle(lib.mentat_db_history, self._ptr))

    def basis_t(self) -> int:
        return int(library().mentat_db_basis_t(self._ptr))

    def q(self, query: str, inputs_edn: Optional[str], options_json: Optional[str]) -> str:
        lib = library()
        return _call_text(lib.mentat_db_q, self._ptr, _enc(query), _enc(inputs_edn),
                          _enc(options_json), EDN)

    def explain(self, query: str, inputs_edn: Optional[str],
                options_json: Optional[str]) -> str:
        lib = library()
        return _call_text(lib.mentat_db_explain, self._ptr, _enc(query), _enc(inputs_edn),
                          _enc(options_json))

    def prepare(self, query: str) -> "NativePrepared":
        lib = library()
        return NativePrepared(_call_handle(lib.mentat_prepare, self._ptr, _enc(query)))

    def pull(self, pattern: str, eid: str) -> str:
        lib = library()
        return _call_text(lib.mentat_pull, self._ptr, _enc(pattern), _enc(eid), EDN)

    def entity(self, eid: str) -> str:
        lib = library()
        return _call_text(lib.mentat_entity, self._ptr, _enc(eid), EDN)

    def datoms(self, index: str, components_edn: Optional[str]) -> str:
        lib = library()
        return _call_text(lib.mentat_datoms, self._ptr, _enc(index), _enc(components_edn), EDN)

    def __del__(self) -> None:
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and _lib is not None:
            try:
                _lib.mentat_db_free(ptr)
            except Exception:
                pass


class NativePrepared:
    """A mentat_prepared: a parsed query bound to a database value."""

    def __init__(self, ptr: int) -> None:
        self._ptr = ptr

    def run(self, inputs_edn: Optional[str], options_json: Optional[str]) -> str:
        lib = library()
        return _call_text(lib.mentat_prepared_run, self._ptr, _enc(inputs_edn),
                          _enc(options_json), EDN)

    def __del__(self) -> None:
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and _lib is not None:
            try:
                _lib.mentat_prepared_free(ptr)
            except Exception:
                pass


class NativeListener:
    """A mentat_listener. The ctypes callback object is kept here for as long as the
    listener lives; stop() frees the listener (from another thread when called from within
    the callback, which mentat_listener_free forbids)."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self._callback = callback
        self._ptr: Optional[int] = None
        self._stopped = False
        self._lock = threading.Lock()
        self._in_callback: Optional[int] = None  # the thread running the callback
        self._cfn = LISTEN_FN(self._invoke)

    def _invoke(self, user_data: Any, report: Optional[bytes]) -> None:
        # Runs on mentat's listener thread; nothing may propagate into C.
        try:
            if self._stopped:
                return
            self._in_callback = threading.get_ident()
            try:
                self._callback((report or b"").decode("utf-8", "replace"))
            finally:
                self._in_callback = None
        except BaseException:  # the callback wrapper reports its own errors
            try:
                import traceback
                traceback.print_exc(file=sys.stderr)
            except Exception:
                pass

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        """Stops the listener: once this returns (when not called from the callback), the
        callback is not running and is never called again."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            ptr, self._ptr = self._ptr, None
        if not ptr:
            return
        lib = library()
        if self._in_callback == threading.get_ident():
            # From within the callback: mentat_listener_free would wait for this very call.
            t = threading.Thread(target=lib.mentat_listener_free, args=(ptr,),
                                 name="mentat-listener-stop", daemon=True)
            t.start()
            # The ctypes function object must outlive the listener: keep it with the thread.
            t._mentat_cfn = self._cfn  # type: ignore[attr-defined]
            return
        lib.mentat_listener_free(ptr)

    def __del__(self) -> None:
        try:
            self.stop()
        except Exception:
            pass
