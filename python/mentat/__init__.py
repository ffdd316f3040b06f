"""mentat: an embedded, Datomic-style database (Python binding of libmentat over ctypes,
or a client of a ``mentat serve`` server over HTTP: ``connect("http://HOST:PORT",
token=...)``).

    import mentat
    from mentat import Keyword as K

    with mentat.connect("people.db") as conn:          # "" (the default): in memory
        conn.transact('''[{:db/ident :person/name :db/valueType :db.type/string
                           :db/cardinality :db.cardinality/one
                           :db/unique :db.unique/identity}]''')
        report = conn.transact([{K("db/id"): "ada", K("person/name"): "Ada"}])
        ada = report.tempids["ada"]
        conn.q("[:find ?n . :in $ ?e :where [?e :person/name ?n]]", ada)   # -> "Ada"
        conn.pull("[*]", [K("person/name"), "Ada"])    # {K("db/id"): ..., K("person/name"): "Ada"}
        old = conn.db().as_of(report.tx_id)

The public API:

- :func:`connect` -> :class:`Connection`: ``transact``, ``with_`` (speculative), ``q``,
  ``pull``, ``pull_many``, ``entity``, ``datoms``, ``db``, ``prepare``, ``explain``,
  ``columns``, ``interrupt``, ``last_tx``, ``listen``, ``close``.
- :class:`Db` (an immutable database value): ``as_of``, ``since``, ``history``,
  ``basis_t``, ``q``, ``pull``, ``entity``, ``datoms``, ``prepare``, ``explain``.
- :class:`TxReport` (``tx_id``, ``tx_instant``, ``tempids``, ``tx_data``) and
  :class:`Datom` ``(e, a, v, tx, added)``.
- EDN values: :class:`Keyword`, :class:`Symbol`, :class:`Uri`, :class:`Edn` (raw EDN text),
  :func:`edn.loads` / :func:`edn.dumps` (module :mod:`mentat.edn`).
- Errors: :class:`Error` and one subclass per mentat code (:class:`ParseError`,
  :class:`SchemaError`, :class:`ConflictError`, :class:`NotFoundError`,
  :class:`Interrupted`, :class:`InvalidArgument`, ...); :class:`AuthError` for a token a
  server refused.

The shared library is found through ``MENTAT_LIBRARY``, next to the installed package, in
the source tree's ``build/src``, or by the loader (see :mod:`mentat._native`); it is loaded
on first use.
"""

from __future__ import annotations

from . import edn
from .connection import (Connection, Datom, Db, Listener, PreparedQuery, TxReport,
                         connect)
from .edn import (Char, Edn, EdnParseError, FrozenDict, Keyword, List, Regex, Symbol,
                  Tagged, Uri, dumps, loads)
from .errors import (AuthError, BusyError, CasMismatchError, ConflictError, CorruptError,
                     Error, InternalError, Interrupted, InvalidArgument, IoError, NotFoundError,
                     ParseError, SchemaError, UnsupportedError)

__all__ = [
    "connect", "Connection", "Db", "PreparedQuery", "Listener", "TxReport", "Datom",
    "Keyword", "Symbol", "Uri", "Char", "Regex", "List", "Tagged", "FrozenDict", "Edn",
    "EdnParseError", "loads", "dumps", "edn", "version", "library_path",
    "Error", "InvalidArgument", "ParseError", "NotFoundError", "SchemaError",
    "ConflictError", "CasMismatchError", "BusyError", "Interrupted", "IoError",
    "CorruptError", "UnsupportedError", "InternalError", "AuthError",
]

__version__ = "0.1.0"


def version() -> str:
    """The loaded libmentat's version, ``"MAJOR.MINOR.PATCH"`` (loads the library)."""
    from . import _native
    return _native.version()


def library_path() -> str:
    """Where libmentat was loaded from (loads the library)."""
    from . import _native
    return _native.library_path()
