"""Connections, database values, prepared queries, listeners and reports.

These classes convert between Python values and EDN text and leave the rest to a backend
offering the same few calls on text: the embedded library through ctypes
(:mod:`mentat._native`), or a ``mentat serve`` server over HTTP (:mod:`mentat._http`).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import sys
import threading
import traceback
import weakref
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence,
                    Tuple, Union)

from . import edn as _edn
from .edn import Edn, Keyword, Symbol, dumps, loads
from .errors import InvalidArgument, ParseError

__all__ = ["connect", "Connection", "Db", "PreparedQuery", "Listener", "TxReport", "Datom"]

#: A point in time for as_of / since: a transaction id (as TxReport.tx_id gives it), a
#: datetime (a naive one is UTC), or a TxReport (its tx_id).
TxPoint = Union[int, _dt.datetime, "TxReport"]

#: Transaction data: EDN text, Edn, or Python data (a list of entity maps and list forms).
TxData = Union[str, Edn, Sequence[Any]]

#: A query: EDN text, Edn, or Python data (a list in the vector form, or a dict).
Query = Union[str, Edn, Sequence[Any], Dict[Any, Any]]

#: An entity identifier: an entity id, an ident keyword, a lookup ref [attr value], or Edn.
Eid = Union[int, Keyword, Sequence[Any], Edn]


class Datom(NamedTuple):
    """A datom ``(e, a, v, tx, added)``; ``a`` is the attribute's ident Keyword (its id when
    it has no ident)."""

    e: int
    a: Union[Keyword, int]
    v: Any
    tx: int
    added: bool


@dataclass
class TxReport:
    """What a transaction did.

    Attributes:
        tx_id: the transaction's entity id (usable as an ``as_of`` / ``since`` point).
        tx_instant: its ``:db/txInstant``, a UTC-aware datetime.
        tempids: each tempid string of the data -> the entity id it resolved to.
        tx_data: the datoms asserted and retracted, in mentat's order.
    """

    tx_id: int
    tx_instant: Optional[_dt.datetime]
    tempids: Dict[str, int] = field(default_factory=dict)
    tx_data: List[Datom] = field(default_factory=list)

    @classmethod
    def from_edn(cls, text: str) -> "TxReport":
        """The report of mentat's EDN text ``{:tx-id .. :tx-instant .. :tempids ..
        :tx-data ..}``."""
        m = loads(text)
        if not isinstance(m, dict):
            raise InvalidArgument("unexpected transaction report: %s" % text[:200])
        tempids = m.get(_K_TEMPIDS) or {}
        return cls(
            tx_id=m.get(_K_TX_ID),
            tx_instant=m.get(_K_TX_INSTANT),
            tempids={(k if isinstance(k, str) else str(k)): v for k, v in tempids.items()},
            tx_data=[_datom(d) for d in (m.get(_K_TX_DATA) or [])],
        )

    def to_edn(self) -> str:
        """The report as EDN text, as mentat prints it."""
        return dumps({_K_TX_ID: self.tx_id, _K_TX_INSTANT: self.tx_instant,
                      _K_TEMPIDS: self.tempids,
                      _K_TX_DATA: [list(d) for d in self.tx_data]})


_K_TX_ID = Keyword("tx-id")
_K_TX_INSTANT = Keyword("tx-instant")
_K_TEMPIDS = Keyword("tempids")
_K_TX_DATA = Keyword("tx-data")
_K_FIND = Keyword("find")
_RETURN_MAP_KEYS = {Keyword("keys"): "keys", Keyword("strs"): "strs", Keyword("syms"): "syms"}


def _datom(row: Sequence[Any]) -> Datom:
    e, a, v, tx, added = row
    return Datom(e, a, v, tx, bool(added))


# ---------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------

def _text(value: Any) -> str:
    """EDN text of a query, pattern or transaction: str and Edn as they are, data printed."""
    if isinstance(value, str):
        return value
    if isinstance(value, Edn):
        return value.text
    return dumps(value)


def _value_text(value: Any) -> str:
    """EDN text of a value (a str is a string value)."""
    return dumps(value)


def _inputs_edn(inputs: Sequence[Any]) -> Optional[str]:
    if not inputs:
        return None
    parts = []
    for x in inputs:
        if isinstance(x, Db):
            raise TypeError("database inputs are not supported; query the Db instead "
                            "(db.q(...)) or pass as_of/since/history")
        parts.append(dumps(x))
    return "[" + " ".join(parts) + "]"


def _eid_edn(eid: Eid) -> str:
    if isinstance(eid, bool):
        raise TypeError("an entity id must be an int, a Keyword or a lookup ref, not a bool")
    if isinstance(eid, Edn):
        return eid.text
    if isinstance(eid, str):
        raise TypeError("an entity id must be an int, a Keyword, a lookup ref [attr value] "
                        "or mentat.Edn(text), not a str (%r)" % eid)
    return dumps(eid)


def _seconds_to_ms(value: Union[None, int, float, _dt.timedelta], what: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, _dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number of seconds or a timedelta" % what)
    if value < 0:
        raise ValueError("%s must not be negative" % what)
    ms = int(round(value * 1000))
    if value > 0 and ms == 0:
        ms = 1
    return ms


def _point_json(t: TxPoint, what: str) -> Union[int, str]:
    if isinstance(t, TxReport):
        return t.tx_id
    if isinstance(t, bool):
        raise TypeError("%s must be a tx id (int), a datetime or a TxReport" % what)
    if isinstance(t, int):
        return t
    if isinstance(t, _dt.datetime):
        return _edn.format_instant(t)
    raise TypeError("%s must be a tx id (int), a datetime or a TxReport, not %s"
                    % (what, type(t).__name__))


def _point_native(t: TxPoint, what: str) -> Tuple[Optional[int], int]:
    """(tx, 0) or (None, instant micros) for the C API's as_of / since."""
    p = _point_json(t, what)
    if isinstance(p, int):
        return p, 0
    assert isinstance(t, _dt.datetime)
    return None, _edn.instant_micros(t)


def _options_json(as_of: Optional[TxPoint], since: Optional[TxPoint], history: bool,
                  timeout: Union[None, int, float, _dt.timedelta]) -> Optional[str]:
    o: Dict[str, Any] = {}
    if as_of is not None:
        o["asOf"] = _point_json(as_of, "as_of")
    if since is not None:
        o["since"] = _point_json(since, "since")
    if history:
        o["history"] = True
    ms = _seconds_to_ms(timeout, "timeout")
    if ms is not None:
        o["timeout"] = ms
    return json.dumps(o) if o else None


class _Shape(NamedTuple):
    kind: str  # "relation", "collection", "tuple", "scalar", or "" (unknown)
    keys: Optional[str]  # "keys", "strs", "syms" or None
    key_names: Tuple[str, ...]  # the declared return-map keys, in order


def _find_spec(form: Any) -> Tuple[Optional[List[Any]], Optional[str], Tuple[str, ...]]:
    """(find elements, return-map kind, key names) of a parsed query."""
    find: Optional[List[Any]] = None
    keys: Optional[str] = None
    names: Tuple[str, ...] = ()
    if isinstance(form, dict):
        f = form.get(_K_FIND)
        find = list(f) if isinstance(f, list) else None
        for k, kind in _RETURN_MAP_KEYS.items():
            if k in form:
                keys = kind
                names = tuple(_key_name(x) for x in (form[k] or []))
        return find, keys, names
    if isinstance(form, list):
        i = 0
        while i < len(form):
            x = form[i]
            if isinstance(x, Keyword):
                j = i + 1
                while j < len(form) and not isinstance(form[j], Keyword):
                    j += 1
                if x == _K_FIND:
                    find = form[i + 1:j]
                elif x in _RETURN_MAP_KEYS:
                    keys = _RETURN_MAP_KEYS[x]
                    names = tuple(_key_name(y) for y in form[i + 1:j])
                i = j
            else:
                i += 1
    return find, keys, names


def _key_name(k: Any) -> str:
    if isinstance(k, (Keyword, Symbol)):
        return k.text
    return str(k)


_DOT = Symbol(".")
_ELLIPSIS = Symbol("...")


@functools.lru_cache(maxsize=512)
def _query_shape(query: str) -> _Shape:
    try:
        form = loads(query)
    except ParseError:
        return _Shape("", None, ())
    find, keys, names = _find_spec(form)
    kind = "relation"
    if not find:
        kind = ""
    elif len(find) == 2 and find[1] == _DOT:
        kind = "scalar"
    elif len(find) == 1 and isinstance(find[0], list) and not isinstance(find[0], _edn.List):
        kind = "collection" if find[0] and find[0][-1] == _ELLIPSIS else "tuple"
    return _Shape(kind, keys, names)


def _row_map(m: Dict[Any, Any], shape: _Shape) -> Dict[str, Any]:
    out = {_key_name(k): v for k, v in m.items()}
    if shape.key_names and set(shape.key_names) == set(out):
        return {k: out[k] for k in shape.key_names}
    return out


def _convert_result(text: str, query: str) -> Any:
    value = loads(text)
    shape = _query_shape(query)
    kind = shape.kind
    if kind == "scalar":
        return value
    if kind == "collection":
        return value
    if kind == "tuple":
        if value is None:
            return None
        if isinstance(value, dict):
            return _row_map(value, shape)
        return tuple(value)
    if kind == "relation":
        if shape.keys:
            return [_row_map(r, shape) if isinstance(r, dict) else tuple(r) for r in value]
        return [tuple(r) if isinstance(r, list) else r for r in value]
    # Unknown shape (the query text is beyond the Python reader): guess from the result.
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        return [tuple(r) for r in value]
    return value


# ---------------------------------------------------------------------------------------
# Connection, Db, PreparedQuery, Listener
# ---------------------------------------------------------------------------------------

class _ReadCalls:
    """The read calls shared by Connection and Db (each gives ``_native_db()``)."""

    def _native_db(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def pull(self, pattern: Any, eid: Eid) -> Optional[Dict[Keyword, Any]]:
        """Pulls `pattern` (EDN text or data, e.g. ``"[:person/name {:person/friend [*]}]"``)
        for the entity `eid` (an id, an ident Keyword or a lookup ref ``[attr value]``).

        Returns a dict keyed by attribute Keywords as EDN gives them (``:db/id`` included
        when pulled), nested refs as nested dicts (or lists of them for cardinality many);
        None when a lookup ref names no entity.
        """
        return loads(self._native_db().pull(_text(pattern), _eid_edn(eid)))

    def pull_many(self, pattern: Any, eids: Iterable[Eid]) -> List[Optional[Dict[Keyword, Any]]]:
        """``pull`` for each of `eids`, on one database value."""
        db = self._native_db()
        p = _text(pattern)
        return [loads(db.pull(p, _eid_edn(e))) for e in eids]

    def entity(self, eid: Eid) -> Dict[Keyword, Any]:
        """Every attribute of the entity `eid`: ``{Keyword("db/id"): N, attr: value, ...}``,
        component entities included (keys are Keywords)."""
        return loads(self._native_db().entity(_eid_edn(eid)))

    def datoms(self, index: Union[str, Keyword], *components: Any) -> List[Datom]:
        """The datoms of `index` (``"eavt"``, ``"aevt"``, ``"avet"``, ``"vaet"``, with or
        without the colon, or a Keyword) whose leading components equal `components`
        (entity ids, ident Keywords, lookup refs, values)."""
        idx = str(index)
        comps = dumps(list(components)) if components else None
        return [_datom(d) for d in loads(self._native_db().datoms(idx, comps))]


class Db(_ReadCalls):
    """An immutable database value: the store as of a basis, maybe filtered (as-of, since,
    history). Safe to share between threads; it keeps the store open until it is garbage-
    collected, even after the connection is closed."""

    def __init__(self, native: Any) -> None:
        self._db = native

    def _native_db(self) -> Any:
        return self._db

    def as_of(self, t: TxPoint) -> "Db":
        """This database as of the transaction `t` (a tx id, a TxReport) or of the last
        transaction at or before the instant `t` (a datetime; naive is UTC)."""
        tx, micros = _point_native(t, "as_of")
        return Db(self._db.as_of(tx, micros))

    def since(self, t: TxPoint) -> "Db":
        """This database with only the datoms added after `t` (as for ``as_of``)."""
        tx, micros = _point_native(t, "since")
        return Db(self._db.since(tx, micros))

    def history(self) -> "Db":
        """Every assertion and retraction ever made (query with a 5-element pattern
        ``[?e ?a ?v ?tx ?added]`` to see which)."""
        return Db(self._db.history())

    @property
    def basis_t(self) -> int:
        """Datomic's basis-t of this value (0 before any transaction)."""
        return self._db.basis_t()

    def q(self, query: Query, *inputs: Any, as_of: Optional[TxPoint] = None,
          since: Optional[TxPoint] = None, history: bool = False,
          timeout: Union[None, int, float, _dt.timedelta] = None) -> Any:
        """Runs a query on this database value; see :meth:`Connection.q`."""
        text = _text(query)
        out = self._db.q(text, _inputs_edn(inputs), _options_json(as_of, since, history,
                                                                  timeout))
        return _convert_result(out, text)

    def explain(self, query: Query, *inputs: Any, as_of: Optional[TxPoint] = None,
                since: Optional[TxPoint] = None, history: bool = False) -> str:
        """The plan of a query (what the CLI's ``.explain`` shows), as text."""
        return self._db.explain(_text(query), _inputs_edn(inputs),
                                _options_json(as_of, since, history, None))

    def prepare(self, query: Query) -> "PreparedQuery":
        """Parses `query` once for many runs on this database value."""
        text = _text(query)
        return PreparedQuery(text, lambda: self._db, self._db.prepare(text), None)

    def __repr__(self) -> str:
        if hasattr(self._db, "describe"):  # over HTTP: no request for a repr
            return "<mentat.Db %s>" % self._db.describe()
        return "<mentat.Db basis_t=%d>" % self.basis_t


class PreparedQuery:
    """A query parsed once and run many times with new inputs (``.run(*inputs)``), from
    any number of threads.

    From :meth:`Connection.prepare` each run sees the latest transactions (the query is
    re-prepared on the current database when a transaction has committed since); from
    :meth:`Db.prepare` it runs on that database value.
    """

    def __init__(self, query: str, db_fn: Callable[[], Any], prepared: Any,
                 last_tx_fn: Optional[Callable[[], int]]) -> None:
        self.query: str = query
        self._db_fn = db_fn
        self._last_tx_fn = last_tx_fn
        self._lock = threading.Lock()
        self._prepared = prepared
        self._tx = last_tx_fn() if last_tx_fn else None

    def _current(self) -> Any:
        if self._last_tx_fn is None:
            return self._prepared
        try:
            tx = self._last_tx_fn()
        except InvalidArgument:  # the connection is closed: its last database value
            return self._prepared
        with self._lock:
            if tx == self._tx:
                return self._prepared
        prepared = self._db_fn().prepare(self.query)
        with self._lock:
            self._prepared, self._tx = prepared, tx
        return prepared

    def run(self, *inputs: Any, as_of: Optional[TxPoint] = None,
            since: Optional[TxPoint] = None, history: bool = False,
            timeout: Union[None, int, float, _dt.timedelta] = None) -> Any:
        """Runs the query with `inputs` (as for :meth:`Connection.q`)."""
        out = self._current().run(_inputs_edn(inputs),
                                  _options_json(as_of, since, history, timeout))
        return _convert_result(out, self.query)

    __call__ = run

    def __repr__(self) -> str:
        return "<mentat.PreparedQuery %r>" % self.query


class Listener:
    """A registered transaction listener (:meth:`Connection.listen`). ``stop()`` it, or
    use it as a context manager; closing the connection stops it too."""

    def __init__(self, native: Any, conn: "Connection") -> None:
        self._native = native
        self._conn_ref = weakref.ref(conn)

    @property
    def stopped(self) -> bool:
        """True once stop() was called."""
        return self._native.stopped

    def stop(self) -> None:
        """Stops listening: once this returns the callback is not running and is never
        called again (called from within the callback, it stops after that call)."""
        self._native.stop()
        conn = self._conn_ref()
        if conn is not None:
            with conn._listeners_lock:
                conn._listeners.discard(self)

    def __enter__(self) -> "Listener":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _default_on_error(exc: BaseException) -> None:
    sys.stderr.write("mentat: a listener callback raised an exception:\n")
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


class Connection(_ReadCalls):
    """A connection to a mentat store (:func:`connect`).

    Usable from many threads at once: reads run in parallel (the library is called without
    holding the GIL), writes are serialized by mentat. A context manager: ``with
    mentat.connect(path) as conn: ...`` closes it on exit.
    """

    def __init__(self, store: Any, path: str) -> None:
        self._store = store
        self.path: str = path
        self._listeners: "set[Listener]" = set()
        self._listeners_lock = threading.Lock()

    # -- lifetime ---------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._store.closed

    def close(self) -> None:
        """Stops this connection's listeners and closes the connection (waiting for the
        calls running on it). Db values and prepared queries taken from it stay usable.
        Closing twice does nothing."""
        with self._listeners_lock:
            listeners = list(self._listeners)
            self._listeners.clear()
        for lst in listeners:
            lst._native.stop()
        self._store.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return "<mentat.Connection %r%s>" % (self.path or ":memory:",
                                             " closed" if self.closed else "")

    # -- writes -----------------------------------------------------------------------

    def transact(self, data: TxData) -> TxReport:
        """Transacts `data`: EDN text (a vector of list forms and entity maps), ``Edn``, or
        Python data (a list of dicts and of lists/tuples for list forms) printed to EDN.

        A failed transaction writes nothing and raises the :class:`mentat.Error` subclass of
        its code (SchemaError, ConflictError, ...).
        """
        return TxReport.from_edn(self._store.transact(_text(data), False))

    def with_(self, data: TxData) -> TxReport:
        """Speculative transaction (Datomic's ``with``, mentat_with): the report as if
        `data` had been transacted; then it is rolled back, so nothing is written."""
        return TxReport.from_edn(self._store.transact(_text(data), True))

    # -- reads ------------------------------------------------------------------------

    def _native_db(self) -> Any:
        return self._store.db()

    def db(self) -> Db:
        """The current database value."""
        return Db(self._store.db())

    def last_tx(self) -> int:
        """The last committed transaction's id."""
        return self._store.last_tx()

    def q(self, query: Query, *inputs: Any, as_of: Optional[TxPoint] = None,
          since: Optional[TxPoint] = None, history: bool = False,
          timeout: Union[None, int, float, _dt.timedelta] = None) -> Any:
        """Runs a Datalog query on the current database.

        `query` is EDN text (or Python data printed to EDN). `inputs` are the values of the
        query's ``:in`` items after a leading ``$``, in order: Python values (a str is a
        string; a list or tuple a collection, tuple or relation), or ``mentat.Edn(text)``
        for EDN text such as a rule set.

        `as_of` and `since` take a tx id, a datetime or a TxReport; `history` queries every
        assertion and retraction; `timeout` is in seconds (a float or a timedelta) and
        raises :class:`mentat.Interrupted` when exceeded.

        Returns, by the shape of ``:find``: a relation as a list of tuples; a collection
        (``[?x ...]``) as a list; a tuple (``[?a ?b]``) as a tuple or None; a scalar
        (``?x .``) as a value or None; with ``:keys``/``:strs``/``:syms``, rows as dicts
        keyed by the key names (str) in declared order.
        """
        text = _text(query)
        out = self._store.q(text, _inputs_edn(inputs),
                            _options_json(as_of, since, history, timeout))
        return _convert_result(out, text)

    def explain(self, query: Query, *inputs: Any, as_of: Optional[TxPoint] = None,
                since: Optional[TxPoint] = None, history: bool = False) -> str:
        """The plan of a query on the current database, as text."""
        return self.db().explain(query, *inputs, as_of=as_of, since=since, history=history)

    def columns(self, query: Query) -> List[str]:
        """The query's column names (``["?e", "(count ?i)"]``), without running it."""
        return loads(self._store.query_columns(_text(query)))

    def prepare(self, query: Query) -> PreparedQuery:
        """Parses `query` once; ``.run(*inputs)`` runs it on the latest database."""
        text = _text(query)
        store = self._store
        # A remote store's db() is the latest state already: no last_tx check per run.
        last_tx = None if getattr(store, "remote", False) else store.last_tx
        return PreparedQuery(text, store.db, store.db().prepare(text), last_tx)

    def interrupt(self) -> None:
        """Makes every query running on this connection (in other threads) fail with
        :class:`mentat.Interrupted`; the connection stays usable."""
        self._store.interrupt()

    # -- listening --------------------------------------------------------------------

    def listen(self, callback: Callable[[TxReport], Any],
               attributes: Optional[Iterable[Union[Keyword, str]]] = None,
               on_error: Optional[Callable[[BaseException], Any]] = None) -> Listener:
        """Calls ``callback(report)`` with the :class:`TxReport` of every transaction
        committed after this call (only those touching one of `attributes`, ident Keywords
        or ``"ns/name"`` strings, when given), one at a time in commit order, on mentat's
        listener thread.

        An exception raised by `callback` does not reach mentat: it goes to `on_error`
        (default: printed to stderr). Returns a :class:`Listener`; ``stop()`` it.
        """
        attrs = None
        if attributes is not None:
            attrs = dumps([a if isinstance(a, Keyword) else Keyword(a) for a in attributes])
        handler = on_error or _default_on_error

        def invoke(text: str) -> None:
            try:
                callback(TxReport.from_edn(text))
            except BaseException as e:  # noqa: B902 - nothing may reach C
                try:
                    handler(e)
                except BaseException:
                    pass

        listener = Listener(self._store.listen(attrs, invoke), self)
        with self._listeners_lock:
            self._listeners.add(listener)
        return listener


def connect(path: Union[str, "os.PathLike[str]"] = "", *, read_only: Optional[bool] = None,
            create: Optional[bool] = None, synchronous: Optional[str] = None,
            busy_timeout: Union[None, int, float, _dt.timedelta] = None,
            auto_index: Optional[str] = None, replicas: Optional[Sequence[str]] = None,
            replica_wait: Union[None, int, float, _dt.timedelta] = None,
            token: Optional[str] = None, cafile: Optional[str] = None,
            ssl_context: Any = None,
            http_timeout: Union[None, int, float, _dt.timedelta] = None) -> Connection:
    """Opens (creating when missing) the store at `path` and returns a :class:`Connection`.

    `path` is a file, ``""`` (the default) for a new in-memory store, or a PostgreSQL URI
    (``"postgresql://user@host/db"``) or libpq keyword string.

    Options (None leaves mentat's default): `read_only`, `create` (bools); `synchronous`
    (``"off"``, ``"normal"``, ``"full"``, ``"extra"``); `busy_timeout` and `replica_wait`
    in seconds (float or timedelta); `auto_index` (``"off"``, ``"schema"``,
    ``"adaptive"``); `replicas` (PostgreSQL standby names).

    ``connect("http://HOST:PORT", token=...)`` (or ``https://``) connects to a ``mentat
    serve`` server instead (see :mod:`mentat._http`): `token` is its bearer token; for
    https, `cafile` (a PEM file of the CAs to trust) or `ssl_context` (an
    ``ssl.SSLContext``), else the system's CAs; `http_timeout` (seconds) bounds each
    socket operation (None or 0: no limit). The store options above do not apply there.
    """
    p = os.fspath(path)
    if not isinstance(p, str):
        p = os.fsdecode(p)
    if p.lower().startswith(("http://", "https://")):
        given = [name for name, v in (("read_only", read_only), ("create", create),
                                      ("synchronous", synchronous),
                                      ("busy_timeout", busy_timeout),
                                      ("auto_index", auto_index), ("replicas", replicas),
                                      ("replica_wait", replica_wait)) if v is not None]
        if given:
            raise InvalidArgument("connect(%r): %s %s for stores, not for HTTP servers"
                                  % (p, ", ".join(given), "is" if len(given) == 1 else "are"))
        ms = _seconds_to_ms(http_timeout, "http_timeout")
        from ._http import HttpStore
        return Connection(HttpStore(p, token, cafile, ssl_context,
                                    ms / 1000.0 if ms else None), p)
    for name, v in (("token", token), ("cafile", cafile), ("ssl_context", ssl_context),
                    ("http_timeout", http_timeout)):
        if v is not None:
            raise InvalidArgument("connect(): %s is for HTTP servers, not for %r" % (name, p))
    opts: Dict[str, Any] = {}
    if read_only is not None:
        opts["readOnly"] = bool(read_only)
    if create is not None:
        opts["create"] = bool(create)
    if synchronous is not None:
        opts["synchronous"] = str(synchronous)
    ms = _seconds_to_ms(busy_timeout, "busy_timeout")
    if ms is not None:
        opts["busyTimeout"] = ms
    if auto_index is not None:
        opts["autoIndex"] = str(auto_index)
    if replicas is not None:
        if isinstance(replicas, str):
            replicas = [replicas]
        opts["replicas"] = [str(r) for r in replicas]
    ms = _seconds_to_ms(replica_wait, "replica_wait")
    if ms is not None:
        opts["replicaWait"] = ms
    from ._native import NativeStore
    store = NativeStore(p, json.dumps(opts) if opts else None)
    return Connection(store, p)
