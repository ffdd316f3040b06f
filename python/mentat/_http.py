"""The HTTP backend: a client of ``mentat serve`` (tools/mentat/serve.cc, doc/server.md).

It offers the same small classes as :mod:`mentat._native` -- a store
(:class:`HttpStore`), database values (:class:`HttpDb`) and prepared queries
(:class:`HttpPrepared`) -- dealing in the same EDN and JSON text, so that
:mod:`mentat.connection` serves both. Standard library only (``http.client``, ``ssl``,
``json``, ``urllib.parse``).

Every request is an EDN body (``Content-Type: application/edn``) and asks for an EDN
answer (``Accept: application/edn``), so values round-trip exactly: query inputs are
printed by the package's EDN writer, answers read by its reader. Error answers
(``{:error message :code "parse error"}``) become the :class:`mentat.Error` subclass of
their code (401 and 403: :class:`mentat.AuthError`; 429: :class:`mentat.BusyError`; 413:
:class:`mentat.InvalidArgument`; 504: :class:`mentat.Interrupted`); a server that cannot be
reached raises :class:`mentat.IoError`.

Each thread has its own keep-alive connection to the server (``threading.local``), so
that any number of threads can share one :class:`mentat.Connection`. A connection the
server closed while it was idle is noticed before reuse, and a request that fails on a
reused connection before any answer arrives is sent once more on a new one.

What the server does not offer raises :class:`mentat.UnsupportedError`: ``listen``,
``interrupt``, ``with_`` (speculative transactions), ``explain``, and ``datoms`` on an
as-of, since or history database. A :class:`mentat.Db` over HTTP is not a snapshot: it
carries as-of / since / history options, and a plain ``conn.db()`` reads the server's
latest state on each call.
"""

from __future__ import annotations

import datetime as _dt
import http.client
import json
import select
import ssl
import threading
import urllib.parse
import weakref
from typing import Any, Dict, Optional, Tuple

from .edn import Keyword, List, Symbol, dumps, format_instant, loads
from .errors import (CODE_NAMES, AuthError, BusyError, ConflictError, Error,
                     InternalError, Interrupted, InvalidArgument, IoError, NotFoundError,
                     ParseError, UnsupportedError, error_for_code)

__all__ = ["HttpStore", "HttpDb", "HttpPrepared", "parse_url"]

#: The first transaction id; a t (as /health's basisT) is a tx id minus this.
TX_START = 0x10000000

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EDN = "application/edn"
_CODE_BY_NAME = {name: code for code, name in CODE_NAMES.items() if code}
_CLASS_BY_STATUS = {
    400: InvalidArgument, 401: AuthError, 403: AuthError, 404: NotFoundError,
    409: ConflictError, 413: InvalidArgument, 429: BusyError, 500: InternalError,
    501: UnsupportedError, 503: BusyError, 504: Interrupted,
}
_K_ERROR = Keyword("error")
_K_CODE = Keyword("code")
_K_BASIS_T = Keyword("basis-t")
# Failures of a connection the server may have closed while it was idle.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
          ConnectionAbortedError)


def parse_url(url: str) -> Tuple[str, str, int, str]:
    """(scheme, host, port, base path) of ``http[s]://HOST[:PORT][/PREFIX]``."""
    try:
        u = urllib.parse.urlsplit(url)
        port = u.port
    except ValueError as e:
        raise InvalidArgument("connect(%r): not a valid URL: %s" % (url, e)) from None
    scheme = u.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidArgument("connect(%r): the URL must start with http:// or https://" % url)
    if not u.hostname:
        raise InvalidArgument("connect(%r): the URL names no host" % url)
    if u.username is not None or u.password is not None:
        raise InvalidArgument("connect(%r): give the token as connect(url, token=...), "
                              "not in the URL" % url.split("@")[-1])
    if u.query or u.fragment:
        raise InvalidArgument("connect(%r): the URL may not have a query or a fragment" % url)
    if port is None:
        port = 443 if scheme == "https" else 80
    return scheme, u.hostname, port, u.path.rstrip("/")


def _dropped(sock: Any) -> bool:
    """True when an idle keep-alive socket was closed by the server (or holds data nobody
    asked for): it must not be reused."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    if not readable:
        return False
    if isinstance(sock, ssl.SSLSocket):
        # TLS records that are not data (session tickets) make the socket readable too.
        try:
            timeout = sock.gettimeout()
            sock.settimeout(0)
            try:
                sock.recv(1)
            finally:
                sock.settimeout(timeout)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except (OSError, ValueError):
            return True
    return True  # end of stream, or unexpected bytes


class _ClosingMixin:
    """Closes the socket when the connection is garbage-collected (its thread ended)."""

    def __del__(self) -> None:
        try:
            self.close()  # type: ignore[attr-defined]
        except Exception:
            pass


class _HTTPConnection(_ClosingMixin, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_ClosingMixin, http.client.HTTPSConnection):
    pass


class _Transport:
    """Requests to one server: one keep-alive ``http.client`` connection per thread."""

    def __init__(self, url: str, token: Optional[str], cafile: Optional[str],
                 ssl_context: Optional[ssl.SSLContext], timeout: Optional[float]) -> None:
        scheme, host, port, base = parse_url(url)
        if scheme == "http" and (cafile is not None or ssl_context is not None):
            raise InvalidArgument("connect(%r): cafile and ssl_context are for https:// URLs"
                                  % url)
        if cafile is not None and ssl_context is not None:
            raise InvalidArgument("connect(): give cafile or ssl_context, not both")
        if token is not None:
            if not isinstance(token, str):
                raise TypeError("token must be a str")
            if not token or any(c in token for c in "\r\n") or token != token.strip():
                raise InvalidArgument("connect(): the token must be non-empty text without "
                                      "spaces at its ends or line breaks")
        self.url = url
        self.scheme, self.host, self.port, self.base = scheme, host, port, base
        self._context: Optional[ssl.SSLContext] = None
        if scheme == "https":
            if ssl_context is not None:
                self._context = ssl_context
            else:
                try:
                    self._context = ssl.create_default_context(cafile=cafile)
                except (OSError, ssl.SSLError) as e:
                    raise IoError("connect(): cannot load the CA file %r: %s" % (cafile, e),
                                  9) from e
        self._timeout = timeout
        self._headers = {"Accept": _EDN, "User-Agent": "mentat-python"}
        if token is not None:
            self._headers["Authorization"] = "Bearer " + token
        self._local = threading.local()
        self._all: "weakref.WeakSet[http.client.HTTPConnection]" = weakref.WeakSet()
        self._lock = threading.Lock()

    def _new_connection(self) -> http.client.HTTPConnection:
        kw: Dict[str, Any] = {}
        if self._timeout is not None:
            kw["timeout"] = self._timeout
        if self.scheme == "https":
            conn: http.client.HTTPConnection = _HTTPSConnection(
                self.host, self.port, context=self._context, **kw)
        else:
            conn = _HTTPConnection(self.host, self.port, **kw)
        with self._lock:
            self._all.add(conn)
        return conn

    def _connection(self) -> Tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it is an open one being reused."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._new_connection()
            self._local.conn = conn
            return conn, False
        if conn.sock is None:
            return conn, False
        if _dropped(conn.sock):
            conn.close()
            return conn, False
        return conn, True

    def close(self) -> None:
        """Closes every thread's connection (a later request opens a new one)."""
        with self._lock:
            conns = list(self._all)
        for c in conns:
            try:
                c.close()
            except Exception:
                pass

    def _fail(self, e: BaseException) -> IoError:
        return IoError("the request to the mentat server at %s failed: %s"
                       % (self.url, str(e) or type(e).__name__), 9)

    def request(self, method: str, endpoint: str, body: Optional[str] = None,
                params: Optional[Dict[str, str]] = None) -> str:
        """Sends the request and returns the text of a 2xx answer, or raises the error the
        server answered with (or IoError)."""
        path = self.base + endpoint
        if params:
            path += "?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = body.encode("utf-8")
            headers["Content-Type"] = _EDN
        for attempt in (0, 1):
            conn, reused = self._connection()
            try:
                try:
                    conn.request(method, path, body=data, headers=headers)
                except (BrokenPipeError, ConnectionResetError) as send_error:
                    # The server may have answered (413) and closed before reading it all.
                    try:
                        resp = conn.getresponse()
                    except Exception:
                        raise send_error from None
                else:
                    resp = conn.getresponse()
                payload = resp.read()
                status = resp.status
                ctype = resp.getheader("Content-Type") or ""
                if resp.will_close:
                    conn.close()
            except _STALE as e:
                conn.close()
                if reused and attempt == 0:
                    continue
                raise self._fail(e) from e
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                raise self._fail(e) from e
            text = payload.decode("utf-8", "replace")
            if 200 <= status < 300:
                return text
            raise _error_of(status, ctype, text)
        raise AssertionError("unreachable")  # pragma: no cover


def _error_of(status: int, ctype: str, text: str) -> Error:
    """The exception for an error answer: by its code name, else by the HTTP status."""
    message, code_name = None, None
    try:
        if "json" in ctype:
            m = json.loads(text)
            message, code_name = m.get("error"), m.get("code")
        else:
            m = loads(text)
            if isinstance(m, dict):
                message, code_name = m.get(_K_ERROR), m.get(_K_CODE)
    except Exception:
        pass
    if not isinstance(message, str):
        message = "HTTP %d from the mentat server: %s" % (status, text.strip()[:500])
    if not isinstance(code_name, str):
        code_name = None
    if status in (401, 403, 413, 429, 504) or code_name not in _CODE_BY_NAME:
        cls = _CLASS_BY_STATUS.get(status, Error)
        err: Error = cls(message, cls.CODE, code_name or "http %d" % status)
    else:
        err = error_for_code(_CODE_BY_NAME[code_name], message, code_name)
    err.http_status = status
    return err


def _health(transport: _Transport) -> Dict[Any, Any]:
    text = transport.request("GET", "/health")
    try:
        m = loads(text)
    except ParseError:
        m = None
    if not isinstance(m, dict) or not isinstance(m.get(_K_BASIS_T), int):
        raise IoError("%s does not answer GET /health as mentat serve does: %r"
                      % (transport.url, text.strip()[:200]), 9)
    return m


def _point_edn(tx: Optional[int], micros: int) -> str:
    if tx is not None:
        return str(int(tx))
    return '#inst "%s"' % format_instant(_EPOCH + _dt.timedelta(microseconds=micros))


def _options_edn(base: Dict[str, str], options_json: Optional[str]) -> str:
    """The ``:as-of :since :history :timeout`` fields of a request body: the Db's options,
    then a call's (connection.py's JSON options), which take precedence."""
    fields = dict(base)
    if options_json:
        o = json.loads(options_json)
        for key, name in (("asOf", ":as-of"), ("since", ":since")):
            if key in o:
                v = o[key]
                fields[name] = str(v) if isinstance(v, int) else '#inst %s' % dumps(v)
        if o.get("history"):
            fields[":history"] = "true"
        if "timeout" in o:
            fields[":timeout"] = str(int(o["timeout"]))
    return "".join(" %s %s" % kv for kv in fields.items())


class HttpStore:
    """A connection to a mentat server (the store of :class:`mentat.Connection`)."""

    #: A remote store: no snapshots, so prepared queries need no last_tx check.
    remote = True

    def __init__(self, url: str, token: Optional[str] = None, cafile: Optional[str] = None,
                 ssl_context: Optional[ssl.SSLContext] = None,
                 timeout: Optional[float] = None) -> None:
        self._transport = _Transport(url, token, cafile, ssl_context, timeout)
        self.path = url
        self._closed = False
        self.health()  # reach the server now: a bad address fails in connect()

    @property
    def closed(self) -> bool:
        return self._closed

    def _check(self) -> _Transport:
        if self._closed:
            raise InvalidArgument("the connection is closed")
        return self._transport

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._transport.close()

    def health(self) -> Dict[Any, Any]:
        """GET /health: ``{:status "ok" :basis-t N}``."""
        return _health(self._transport)

    def interrupt(self) -> None:
        self._check()
        raise UnsupportedError("interrupt() is not available over HTTP; give q() a timeout "
                               "instead (the server also stops queries after its --timeout)")

    def last_tx(self) -> int:
        self._check()
        return TX_START + self.health()[_K_BASIS_T]

    def transact(self, edn: str, speculative: bool = False) -> str:
        t = self._check()
        if speculative:
            raise UnsupportedError("with_() (a speculative transaction) is not available over "
                                   "HTTP")
        return t.request("POST", "/transact", edn)

    def q(self, query: str, inputs_edn: Optional[str], options_json: Optional[str]) -> str:
        self._check()
        return HttpDb(self._transport).q(query, inputs_edn, options_json)

    def db(self) -> "HttpDb":
        return HttpDb(self._check())

    def query_columns(self, query: str) -> str:
        """The column names of `query`, worked out here (no request): its find elements as
        mentat prints them."""
        from .connection import _find_spec
        form = loads(query)
        find, _, _ = _find_spec(form)
        if not find:
            raise InvalidArgument("the query has no :find")
        elems = list(find)
        if len(elems) == 2 and elems[1] == Symbol("."):
            elems = elems[:1]
        elif len(elems) == 1 and isinstance(elems[0], list) and not isinstance(elems[0], List):
            elems = list(elems[0])
            if elems and elems[-1] == Symbol("..."):
                elems = elems[:-1]
        return dumps([dumps(e) for e in elems])

    def listen(self, attributes_edn: Optional[str], callback: Any) -> Any:
        self._check()
        raise UnsupportedError("listen() is not available over HTTP: the server has no "
                               "change feed")

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class HttpDb:
    """A database over HTTP: the server's latest state, or as of / since / history.

    Not a snapshot: each call reads what the server has then (within the options)."""

    def __init__(self, transport: _Transport, fields: Optional[Dict[str, str]] = None) -> None:
        self._t = transport
        self._fields: Dict[str, str] = dict(fields or {})

    def _with(self, key: str, value: str) -> "HttpDb":
        fields = dict(self._fields)
        fields[key] = value
        return HttpDb(self._t, fields)

    def as_of(self, tx: Optional[int], micros: int = 0) -> "HttpDb":
        return self._with(":as-of", _point_edn(tx, micros))

    def since(self, tx: Optional[int], micros: int = 0) -> "HttpDb":
        return self._with(":since", _point_edn(tx, micros))

    def history(self) -> "HttpDb":
        return self._with(":history", "true")

    def basis_t(self) -> int:
        """The server's latest basis-t (GET /health): a Db over HTTP is not a snapshot."""
        return int(_health(self._t)[_K_BASIS_T])

    def describe(self) -> str:
        """For repr: where and which options, without a request."""
        opts = " ".join("%s %s" % kv for kv in self._fields.items())
        return "%s%s" % (self._t.url, " " + opts if opts else "")

    def q(self, query: str, inputs_edn: Optional[str], options_json: Optional[str]) -> str:
        body = "{:query " + dumps(query)
        if inputs_edn:
            body += " :inputs " + inputs_edn
        body += _options_edn(self._fields, options_json) + "}"
        return self._t.request("POST", "/q", body)

    def explain(self, query: str, inputs_edn: Optional[str],
                options_json: Optional[str]) -> str:
        raise UnsupportedError("explain() is not available over HTTP")

    def prepare(self, query: str) -> "HttpPrepared":
        loads(query)  # EDN syntax errors now; the rest when it runs
        return HttpPrepared(self, query)

    def pull(self, pattern: str, eid: str) -> str:
        body = ("{:pattern " + dumps(pattern) + " :eid " + eid
                + _options_edn(self._fields, None) + "}")
        return self._t.request("POST", "/pull", body)

    def entity(self, eid: str) -> str:
        body = "{:eid " + eid + _options_edn(self._fields, None) + "}"
        return self._t.request("POST", "/entity", body)

    def datoms(self, index: str, components_edn: Optional[str]) -> str:
        if self._fields:
            raise UnsupportedError("datoms() of an as-of, since or history database is not "
                                   "available over HTTP (the server reads the current one)")
        params = {"index": index}
        if components_edn:
            params["components"] = components_edn
        return self._t.request("GET", "/datoms", params=params)


class HttpPrepared:
    """A "prepared" query over HTTP: the server has no prepared statements, so each run
    sends the query again."""

    def __init__(self, db: HttpDb, query: str) -> None:
        self._db = db
        self._query = query

    def run(self, inputs_edn: Optional[str], options_json: Optional[str]) -> str:
        return self._db.q(self._query, inputs_edn, options_json)
