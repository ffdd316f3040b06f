"""EDN for mentat: a reader (:func:`loads`) and a writer (:func:`dumps`).

EDN to Python (:func:`loads`):

=====================  ==========================================================
EDN                    Python
=====================  ==========================================================
``nil``                ``None``
``true`` / ``false``   ``bool``
``42``, ``42N``        ``int`` (big integers too)
``1.5``, ``##NaN``     ``float``
``1.5M``               ``decimal.Decimal``
``"text"``             ``str``
``\\a``, ``\\newline``   :class:`Char` (a ``str`` subclass of length 1)
``:ns/name``           :class:`Keyword`
``sym``, ``ns/sym``    :class:`Symbol`
``#inst "..."``        ``datetime.datetime``, UTC-aware, microsecond precision
``#uuid "..."``        ``uuid.UUID``
``#bytes "00ff"``      ``bytes``
``#uri "..."``         :class:`Uri` (a ``str`` subclass)
``#"re"``              :class:`Regex` (a ``str`` subclass; queries only)
``[...]``              ``list``
``(...)``              :class:`List` (a ``list`` subclass, so it prints back as a list)
``#{...}``             ``frozenset``
``{...}``              ``dict``
``#other x``           :class:`Tagged` (an unknown tag and its value)
=====================  ==========================================================

Map keys and set elements must be hashable in Python: a vector or list there becomes a
``tuple``, a map a :class:`FrozenDict`, a set a ``frozenset``.

Python to EDN (:func:`dumps`): the reverse, plus ``tuple`` -> vector, ``set`` -> set,
``bytearray``/``memoryview`` -> ``#bytes``, :class:`Edn` -> its text verbatim. A naive
``datetime`` is taken as UTC; an aware one is converted to UTC. ``float`` NaN and infinities
raise ``ValueError`` (mentat stores neither), as do ``Decimal`` NaN and infinities.
``datetime.date`` (without a time) is refused with ``TypeError``.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import uuid as _uuid
from decimal import Decimal, InvalidOperation
from typing import Any, Dict, Iterable, List as _ListT, Optional, Tuple, Union

from .errors import ParseError

__all__ = [
    "Keyword",
    "Symbol",
    "Uri",
    "Char",
    "Regex",
    "List",
    "Tagged",
    "FrozenDict",
    "Edn",
    "EdnParseError",
    "loads",
    "loads_all",
    "loads_prefix",
    "dumps",
    "format_instant",
    "parse_instant",
    "instant_micros",
]

UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICRO = _dt.timedelta(microseconds=1)
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class EdnParseError(ParseError):
    """EDN text that the Python reader could not read; ``line`` and ``column`` (1-based,
    in characters) say where."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__("%d:%d: %s" % (line, column, message))
        self.line = line
        self.column = column


# ---------------------------------------------------------------------------------------
# Value classes
# ---------------------------------------------------------------------------------------

_NAME_BAD = re.compile(r'[\s,()\[\]{}"\\;]')


def _split_name(text: str) -> Tuple[Optional[str], str]:
    if text == "/":
        return None, "/"
    slash = text.find("/")
    if slash <= 0:
        return None, text
    return text[:slash], text[slash + 1:]


class _Named:
    """The common part of :class:`Keyword` and :class:`Symbol`."""

    __slots__ = ("_text", "_hash")
    _prefix = ""

    def __init__(self, text: str) -> None:
        if isinstance(text, type(self)):
            text = text._text  # type: ignore[union-attr]
        if not isinstance(text, str):
            raise TypeError("%s text must be a str, not %s" % (type(self).__name__,
                                                              type(text).__name__))
        if not text or _NAME_BAD.search(text):
            raise ValueError("invalid %s %r" % (type(self).__name__.lower(), text))
        self._text = text
        self._hash = hash((type(self).__name__, text))

    @property
    def text(self) -> str:
        """The text without the leading colon of a keyword: ``"ns/name"`` or ``"name"``."""
        return self._text

    @property
    def namespace(self) -> Optional[str]:
        """The namespace (``"person"`` of ``:person/name``), or None."""
        return _split_name(self._text)[0]

    @property
    def name(self) -> str:
        """The name (``"name"`` of ``:person/name``)."""
        return _split_name(self._text)[1]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._text == self._text  # type: ignore

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._hash

    def _key(self) -> Tuple[str, str]:
        ns, name = _split_name(self._text)
        return (ns or "", name)

    def __lt__(self, other: "_Named") -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: "_Named") -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: "_Named") -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: "_Named") -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() >= other._key()

    def __str__(self) -> str:
        return self._prefix + self._text

    def __repr__(self) -> str:
        return "%s(%r)" % (type(self).__name__, self._prefix + self._text)

    def __reduce__(self) -> Any:
        return (type(self), (self._text,))


class Keyword(_Named):
    """An EDN keyword, ``:person/name``.

    ``Keyword("person/name")`` and ``Keyword(":person/name")`` are the same keyword;
    ``str()`` gives ``":person/name"``, ``.namespace`` ``"person"`` and ``.name`` ``"name"``.
    Keywords are hashable, compare equal by text, and order by namespace, then name.
    """

    __slots__ = ()
    _prefix = ":"

    def __init__(self, text: Union[str, "Keyword"]) -> None:
        if isinstance(text, str) and text.startswith(":"):
            text = text[1:]
        super().__init__(text)


class Symbol(_Named):
    """An EDN symbol (``?x``, ``my.ns/f``); in mentat also the value of a
    ``:db.type/symbol`` attribute. Hashable, equal by text, never equal to a Keyword."""

    __slots__ = ()


class Uri(str):
    """A ``#uri "..."`` value (mentat's ``:db.type/uri``): a ``str`` of the URI text that
    prints back as ``#uri``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Uri(%s)" % str.__repr__(self)


class Char(str):
    """An EDN character (``\\a``, ``\\newline``): a one-character ``str`` that prints back as
    a character literal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Char(%s)" % str.__repr__(self)


class Regex(str):
    """A regex literal ``#"..."`` of a query (the pattern text, as written)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Regex(%s)" % str.__repr__(self)


class List(list):
    """An EDN list ``( ... )``: a Python ``list`` that prints back with parentheses (a
    plain ``list`` prints as a vector). Use it to write forms such as rule heads or
    function expressions in Python data."""

    def __repr__(self) -> str:
        return "List(%s)" % list.__repr__(self)


class FrozenDict(dict):
    """A hashable, read-only ``dict``: what an EDN map becomes where Python needs a
    hashable value (a map key or a set element)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def _readonly(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("FrozenDict is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly  # type: ignore

    def __repr__(self) -> str:
        return "FrozenDict(%s)" % dict.__repr__(self)


class Tagged:
    """A tagged literal with a tag this reader does not know: ``#my/tag value``."""

    __slots__ = ("tag", "value")

    def __init__(self, tag: str, value: Any) -> None:
        self.tag: str = tag
        self.value: Any = value

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Tagged) and other.tag == self.tag
                and other.value == self.value)

    def __hash__(self) -> int:
        return hash((self.tag, _hashable(self.value)))

    def __repr__(self) -> str:
        return "Tagged(%r, %r)" % (self.tag, self.value)


class Edn:
    """EDN text to insert verbatim where a value is written (``dumps``, query inputs,
    transaction data): ``conn.q(query, mentat.Edn(rules_text))``.

    A plain ``str`` is always a string value; wrap text in ``Edn`` to mean "this is
    already EDN". The text is not checked here; mentat reports what does not parse.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError("Edn text must be a str, not %s" % type(text).__name__)
        self.text: str = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Edn) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("Edn", self.text))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return "Edn(%r)" % self.text


def _hashable(v: Any) -> Any:
    """`v` as a hashable value: lists -> tuples, dicts -> FrozenDict, sets -> frozenset."""
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        if isinstance(v, FrozenDict):
            return v
        return FrozenDict((_hashable(k), _hashable(x)) for k, x in v.items())
    if isinstance(v, (set, frozenset)):
        return frozenset(_hashable(x) for x in v)
    return v


# ---------------------------------------------------------------------------------------
# Instants
# ---------------------------------------------------------------------------------------

_INST_RE = re.compile(
    r"([+-])?(\d{4,6})(?:-(\d\d)(?:-(\d\d)(?:[Tt](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?"
    r"([Zz]|[+-]\d\d:\d\d)?)?)?)?\Z")


def parse_instant(text: str) -> _dt.datetime:
    """An RFC 3339 instant (as in ``#inst "2024-01-02T03:04:05.123456Z"``; also the short
    forms ``"2024"``, ``"2024-01-02"``) as a UTC-aware datetime, truncated to microseconds.
    ``ValueError`` when it is malformed or outside what ``datetime`` holds."""
    m = _INST_RE.match(text)
    if not m:
        raise ValueError("invalid instant %r" % text)
    sign, year, month, day, hour, minute, second, frac, offset = m.groups()
    if sign is None and len(year) != 4:
        raise ValueError("invalid instant %r: the year must have 4 digits" % text)
    y = int(year) * (-1 if sign == "-" else 1)
    mo = int(month) if month else 1
    d = int(day) if day else 1
    h = int(hour) if hour else 0
    mi = int(minute) if minute else 0
    s = int(second) if second else 0
    us = int((frac + "000000")[:6]) if frac else 0
    if h > 23 or mi > 59 or s > 60:
        raise ValueError("invalid instant %r: time out of range" % text)
    try:
        base = _dt.datetime(y, mo, d, h, mi, 0, us, tzinfo=UTC)
        result = base + _dt.timedelta(seconds=s)
        if offset and offset not in ("Z", "z"):
            sg = -1 if offset[0] == "-" else 1
            oh, om = int(offset[1:3]), int(offset[4:6])
            result -= sg * _dt.timedelta(hours=oh, minutes=om)
    except (ValueError, OverflowError) as e:
        raise ValueError("invalid instant %r: %s" % (text, e)) from None
    return result


def _as_utc(value: _dt.datetime) -> _dt.datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_instant(value: _dt.datetime) -> str:
    """The RFC 3339 text mentat prints for an instant: ``2024-01-02T03:04:05.123Z``
    (milliseconds, or microseconds when they are not whole). A naive datetime is UTC."""
    u = _as_utc(value)
    us = u.microsecond
    frac = "%03d" % (us // 1000) if us % 1000 == 0 else "%06d" % us
    return "%04d-%02d-%02dT%02d:%02d:%02d.%sZ" % (u.year, u.month, u.day, u.hour, u.minute,
                                                 u.second, frac)


def instant_micros(value: _dt.datetime) -> int:
    """Microseconds since the Unix epoch of `value` (a naive datetime is UTC)."""
    return (_as_utc(value) - _EPOCH) // _ONE_MICRO


# ---------------------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------------------

_STR_ESCAPE_RE = re.compile(r'["\\\x00-\x1f\x7f]')
_STR_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape_match(m: "re.Match[str]") -> str:
    c = m.group(0)
    e = _STR_ESCAPES.get(c)
    return e if e is not None else "\\u%04x" % ord(c)


def _write_string(s: str) -> str:
    return '"' + _STR_ESCAPE_RE.sub(_escape_match, s) + '"'


_CHAR_NAMES = {"\n": "newline", " ": "space", "\t": "tab", "\r": "return", "\b": "backspace",
               "\f": "formfeed"}


def _write_char(c: str) -> str:
    if len(c) != 1:
        raise ValueError("a Char must be one character, got %r" % str(c))
    name = _CHAR_NAMES.get(c)
    if name:
        return "\\" + name
    o = ord(c)
    if o < 0xA0 and not (0x20 < o < 0x7F) or 0xD800 <= o <= 0xDFFF:
        return "\\u%04x" % o
    return "\\" + c


def _write_regex(pattern: str) -> str:
    # The pattern goes between the quotes as is; only a quote not already escaped needs a
    # backslash.
    out = ['#"']
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i:i + 2])
            i += 2
            continue
        out.append('\\"' if c == '"' else c)
        i += 1
    out.append('"')
    return "".join(out)


def _write_float(f: float) -> str:
    if math.isnan(f) or math.isinf(f):
        raise ValueError("%r cannot be stored by mentat (NaN and infinities are refused)" % f)
    r = repr(f)
    if "e" in r:
        mant, exp = r.split("e")
        sign = "-" if exp.startswith("-") else ""
        return mant + "e" + sign + (exp.lstrip("+-").lstrip("0") or "0")
    if "." not in r:
        r += ".0"
    return r


def _write_decimal(d: Decimal) -> str:
    if not d.is_finite():
        raise ValueError("%r cannot be written as EDN (NaN and infinities are refused)" % d)
    return str(d) + "M"


def _write_int(i: int) -> str:
    if _INT64_MIN <= i <= _INT64_MAX:
        return str(i)
    return str(i) + "N"


def _write_scalar(v: Any) -> Optional[str]:
    """The EDN text of a non-collection value, or None when `v` is a collection."""
    if v is None:
        return "nil"
    if v is True:
        return "true"
    if v is False:
        return "false"
    t = type(v)
    if t is int:
        return _write_int(v)
    if t is str:
        return _write_string(v)
    if t is float:
        return _write_float(v)
    if t is Keyword:
        return ":" + v._text
    if t is Symbol:
        return v._text
    if isinstance(v, Edn):
        return v.text
    if isinstance(v, (list, tuple, dict, set, frozenset)):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return _write_int(int(v))
    if isinstance(v, float):
        return _write_float(float(v))
    if isinstance(v, Uri):
        return "#uri " + _write_string(str(v))
    if isinstance(v, Char):
        return _write_char(str(v))
    if isinstance(v, Regex):
        return _write_regex(str(v))
    if isinstance(v, str):
        return _write_string(str(v))
    if isinstance(v, Decimal):
        return _write_decimal(v)
    if isinstance(v, _dt.datetime):
        return '#inst "' + format_instant(v) + '"'
    if isinstance(v, _dt.date):
        raise TypeError("a datetime.date has no time; pass a datetime.datetime for an instant")
    if isinstance(v, _uuid.UUID):
        return '#uuid "' + str(v) + '"'
    if isinstance(v, (bytes, bytearray, memoryview)):
        return '#bytes "' + bytes(v).hex() + '"'
    if isinstance(v, (Keyword, Symbol)):
        return str(v)
    if isinstance(v, Tagged):
        return "#" + v.tag + " " + dumps(v.value)
    raise TypeError("cannot write a %s as EDN: %r" % (t.__name__, v))


def dumps(value: Any) -> str:
    """The EDN text of a Python value (see the module documentation for the mapping).

    Raises ``TypeError`` for a value with no EDN form and ``ValueError`` for one mentat
    cannot hold (NaN, infinities). Nesting depth is not limited by Python's recursion
    limit.
    """
    s = _write_scalar(value)
    if s is not None:
        return s
    out: _ListT[str] = []
    # An explicit stack of iterators, so deep data does not hit the recursion limit.
    # Each frame: (iterator over pieces, closing text). Pieces are values or separators.
    stack: _ListT[Tuple[Any, str]] = []

    def open_coll(v: Any) -> None:
        if isinstance(v, dict):
            out.append("{")
            stack.append((_map_pieces(v), "}"))
        elif isinstance(v, (set, frozenset)):
            out.append("#{")
            stack.append((_seq_pieces(v), "}"))
        elif isinstance(v, List):
            out.append("(")
            stack.append((_seq_pieces(v), ")"))
        else:
            out.append("[")
            stack.append((_seq_pieces(v), "]"))

    open_coll(value)
    while stack:
        it, closer = stack[-1]
        for piece in it:
            if piece is _SEP:
                out.append(" ")
                continue
            if piece is _ENTRY_SEP:
                out.append(", ")
                continue
            s = _write_scalar(piece)
            if s is not None:
                out.append(s)
                continue
            open_coll(piece)
            break
        else:
            out.append(closer)
            stack.pop()
    return "".join(out)


_SEP = object()
_ENTRY_SEP = object()


def _seq_pieces(items: Iterable[Any]) -> Iterable[Any]:
    first = True
    for x in items:
        if not first:
            yield _SEP
        first = False
        yield x


def _map_pieces(m: Dict[Any, Any]) -> Iterable[Any]:
    first = True
    for k, v in m.items():
        if not first:
            yield _ENTRY_SEP
        first = False
        yield k
        yield _SEP
        yield v


# ---------------------------------------------------------------------------------------
# Reader
# ---------------------------------------------------------------------------------------

_WS_RE = re.compile(r"(?:[ \t\n\r\f\v,]+|;[^\n]*)+")
_TOKEN_RE = re.compile(r'[^ \t\n\r\f\v,()\[\]{}";\\]+')
_STRING_RE = re.compile(r'"((?:[^"\\]|\\[\s\S])*)"')
_REGEX_RE = re.compile(r'#"((?:[^"\\]|\\[\s\S])*)"')
_STR_UNESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|[\s\S])")
_INT_RE = re.compile(r"[+-]?(?:0|[1-9][0-9]*)\Z")
_BIGINT_RE = re.compile(r"([+-]?(?:0|[1-9][0-9]*))N\Z")
_FLOAT_RE = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?\Z")
_BIGDEC_RE = re.compile(r"([+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)M\Z")
_SYMBOL_PART_RE = re.compile(r"[^\s,()\[\]{}\"\\;@'`~^]+\Z")
_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "b": "\b", "f": "\f"}
_NAMED_CHARS = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r",
                "backspace": "\b", "formfeed": "\f"}
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_TOKEN_CONSTANTS = {"nil": None, "true": True, "false": False}


def _valid_part(part: str, keyword: bool) -> bool:
    if not part or not _SYMBOL_PART_RE.match(part):
        return False
    c0 = part[0]
    if keyword:
        return c0 not in ":#"
    if c0.isdigit() or c0 in "#:":
        return False
    if c0 in "+-." and len(part) > 1 and part[1].isdigit():
        return False
    return True


def _valid_symbol_text(t: str, keyword: bool) -> bool:
    if t == "/":
        return True
    slash = t.find("/")
    if slash < 0:
        return _valid_part(t, keyword)
    ns, name = t[:slash], t[slash + 1:]
    if name == "/":
        return _valid_part(ns, keyword)
    return _valid_part(ns, keyword) and _valid_part(name, keyword) and not name.endswith("/")


class _Frame:
    """An open form: a collection being filled, or a tag or discard awaiting its form."""

    __slots__ = ("kind", "items", "pos", "tag")

    def __init__(self, kind: str, pos: int, tag: str = "") -> None:
        self.kind = kind  # "(", "[", "{", "#{", "tag", "discard", "top"
        self.items: _ListT[Any] = []
        self.pos = pos
        self.tag = tag


class _Reader:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            if isinstance(text, (bytes, bytearray, memoryview)):
                text = bytes(text).decode("utf-8")
            else:
                raise TypeError("EDN text must be a str, not %s" % type(text).__name__)
        if text.startswith("\ufeff"):
            text = text[1:]
        self.text = text
        self.end = 0
        self.starts: _ListT[int] = []  # the offset of each top-level form read

    def error(self, pos: int, message: str) -> EdnParseError:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return EdnParseError(message, line, col)

    def read_all(self, limit: int = 0) -> _ListT[Any]:
        """Every top-level form (the first `limit` when it is not 0; self.end is then
        the offset after the last one read)."""
        text = self.text
        n = len(text)
        i = 0
        top = _Frame("top", 0)
        top_start = 0
        stack: _ListT[_Frame] = [top]
        ws_match = _WS_RE.match
        token_match = _TOKEN_RE.match
        starts = self.starts
        while True:
            m = ws_match(text, i)
            if m:
                i = m.end()
            if i >= n:
                break
            c = text[i]
            start = i
            frame = stack[-1]
            if frame is top:
                top_start = i
            if c in _OPENERS:
                stack.append(_Frame(c, i))
                i += 1
                continue
            if c in ")]}":
                if frame.kind in ("tag", "discard"):
                    if frame.kind == "discard":
                        raise self.error(frame.pos, "#_ has no form to discard")
                    raise self.error(frame.pos, "#%s must be followed by a form" % frame.tag)
                if frame.kind == "top":
                    raise self.error(i, "unmatched closing '%s'" % c)
                expected = "}" if frame.kind == "#{" else _OPENERS[frame.kind]
                if c != expected:
                    raise self.error(i, "expected '%s' to close the %s, found '%s'"
                                     % (expected, _coll_name(frame.kind), c))
                i += 1
                stack.pop()
                value = self.finish(frame)
            elif c == '"':
                m = _STRING_RE.match(text, i)
                if not m:
                    raise self.error(i, "unterminated string")
                i = m.end()
                value = self.unescape(m.group(1), start)
            elif c == "#":
                nxt = text[i + 1] if i + 1 < n else ""
                if nxt == "{":
                    stack.append(_Frame("#{", i))
                    i += 2
                    continue
                if nxt == "_":
                    stack.append(_Frame("discard", i))
                    i += 2
                    continue
                if nxt == '"':
                    m = _REGEX_RE.match(text, i)
                    if not m:
                        raise self.error(i, "unterminated regex literal")
                    i = m.end()
                    value = Regex(m.group(1))
                elif nxt == "#":
                    m = token_match(text, i + 2)
                    name = m.group(0) if m else ""
                    if name == "Inf":
                        value = math.inf
                    elif name == "-Inf":
                        value = -math.inf
                    elif name == "NaN":
                        value = math.nan
                    else:
                        raise self.error(i, "unknown symbolic value ##%s" % name)
                    i += 2 + len(name)
                else:
                    m = token_match(text, i + 1)
                    if not m or not (m.group(0)[0].isalpha()):
                        raise self.error(i, "expected a tag after '#'")
                    tag = m.group(0)
                    stack.append(_Frame("tag", i, tag))
                    i = m.end()
                    continue
            elif c == "\\":
                value, i = self.read_char(i)
            else:
                m = token_match(text, i)
                if not m:
                    raise self.error(i, "unexpected character %r" % c)
                i = m.end()
                value = self.atom(m.group(0), start)
            # Deliver `value` to the open forms, innermost first.
            while True:
                frame = stack[-1]
                kind = frame.kind
                if kind == "discard":
                    stack.pop()
                    break
                if kind == "tag":
                    stack.pop()
                    value = self.tagged(frame, value)
                    continue
                frame.items.append(value)
                if frame is top:
                    starts.append(top_start)
                    if limit and len(top.items) >= limit:
                        self.end = i
                        return top.items
                break
        self.end = n
        frame = stack[-1]
        if frame.kind != "top":
            if frame.kind == "discard":
                raise self.error(frame.pos, "#_ has no form to discard")
            if frame.kind == "tag":
                raise self.error(frame.pos, "#%s must be followed by a form" % frame.tag)
            raise self.error(frame.pos, "unterminated %s" % _coll_name(frame.kind))
        return top.items

    def finish(self, frame: _Frame) -> Any:
        kind = frame.kind
        items = frame.items
        if kind == "[":
            return items
        if kind == "(":
            return List(items)
        if kind == "#{":
            return frozenset(_hashable(x) for x in items)
        if len(items) % 2:
            raise self.error(frame.pos, "map literal has an odd number of forms")
        d: Dict[Any, Any] = {}
        for k in range(0, len(items), 2):
            key = items[k]
            try:
                hash(key)
            except TypeError:
                key = _hashable(key)
            d[key] = items[k + 1]
        if len(d) * 2 != len(items):
            raise self.error(frame.pos, "duplicate map key")
        return d

    def tagged(self, frame: _Frame, value: Any) -> Any:
        tag = frame.tag
        if tag in ("inst", "uuid", "bytes", "uri"):
            if not isinstance(value, str) or isinstance(value, (Char, Regex, Uri)):
                raise self.error(frame.pos, "#%s must be followed by a string" % tag)
            try:
                if tag == "inst":
                    return parse_instant(value)
                if tag == "uuid":
                    if len(value) != 36:
                        raise ValueError("expected 8-4-4-4-12 hex digits")
                    return _uuid.UUID(value)
                if tag == "bytes":
                    return bytes.fromhex(value) if _is_hex(value) else _bad_hex()
                return Uri(value)
            except ValueError as e:
                raise self.error(frame.pos, "invalid #%s %r: %s" % (tag, value, e)) from None
        if tag == "db/fn":
            return value
        return Tagged(tag, value)

    def unescape(self, body: str, pos: int) -> str:
        if "\\" not in body:
            return body
        surrogates = False

        def repl(m: "re.Match[str]") -> str:
            nonlocal surrogates
            e = m.group(1)
            if len(e) == 5:
                cp = int(e[1:], 16)
                if 0xD800 <= cp <= 0xDFFF:
                    surrogates = True
                return chr(cp)
            r = _SIMPLE_ESCAPES.get(e)
            if r is None:
                if e == "u":
                    raise self.error(pos + 1 + m.start(),
                                     "invalid \\u escape: expected four hex digits")
                raise self.error(pos + 1 + m.start(), "invalid escape \\%s in string" % e)
            return r

        s = _STR_UNESCAPE_RE.sub(repl, body)
        if surrogates:
            try:
                s = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
            except UnicodeDecodeError:
                raise self.error(pos, "unpaired surrogate \\u escape in string") from None
        return s

    def read_char(self, i: int) -> Tuple[Char, int]:
        text = self.text
        if i + 1 >= len(text) or text[i + 1] in " \t\n\r\f\v":
            raise self.error(i, "expected a character after '\\'")
        m = _TOKEN_RE.match(text, i + 2)
        end = m.end() if m else i + 2
        token = text[i + 1:end]
        if len(token) == 1:
            return Char(token), end
        named = _NAMED_CHARS.get(token)
        if named is not None:
            return Char(named), end
        if token[0] == "u" and len(token) == 5 and _is_hex(token[1:]):
            return Char(chr(int(token[1:], 16))), end
        if token[0] == "o" and 2 <= len(token) <= 4 and all(d in "01234567" for d in token[1:]):
            v = int(token[1:], 8)
            if v > 0o377:
                raise self.error(i, "octal character \\%s is above \\o377" % token)
            return Char(chr(v)), end
        raise self.error(i, "unknown character literal \\%s" % token)

    def atom(self, tok: str, pos: int) -> Any:
        if tok in _TOKEN_CONSTANTS:
            return _TOKEN_CONSTANTS[tok]
        c0 = tok[0]
        if c0.isdigit() or (c0 in "+-" and len(tok) > 1 and tok[1].isdigit()):
            if _INT_RE.match(tok):
                return int(tok)
            m = _BIGINT_RE.match(tok)
            if m:
                return int(m.group(1))
            if _FLOAT_RE.match(tok):
                return float(tok)
            m = _BIGDEC_RE.match(tok)
            if m:
                try:
                    return Decimal(m.group(1))
                except InvalidOperation:  # pragma: no cover - the regex allows only numbers
                    pass
            why = ""
            digits = tok.lstrip("+-")
            if digits[:2] in ("0x", "0X"):
                why = " (hexadecimal integers are not EDN)"
            elif "/" in tok:
                why = " (ratios are not EDN)"
            elif len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
                why = " (leading zeros are not EDN)"
            raise self.error(pos, "invalid number %s%s" % (tok, why))
        if c0 == ":":
            body = tok[1:]
            if not body:
                raise self.error(pos, "keyword ':' has no name")
            if body[0] == ":":
                raise self.error(pos, "auto-resolved keyword :%s is not EDN" % body)
            if not _valid_symbol_text(body, True):
                raise self.error(pos, "invalid keyword :%s" % body)
            return Keyword(body)
        if not _valid_symbol_text(tok, False):
            raise self.error(pos, "invalid symbol %s" % tok)
        return Symbol(tok)


def _coll_name(kind: str) -> str:
    return {"(": "list", "[": "vector", "{": "map", "#{": "set"}.get(kind, kind)


_HEX_RE = re.compile(r"(?:[0-9a-fA-F]{2})*\Z")


def _is_hex(s: str) -> bool:
    return bool(_HEX_RE.match(s))


def _bad_hex() -> bytes:
    raise ValueError("expected an even number of hex digits")


def loads(text: Union[str, bytes]) -> Any:
    """Reads exactly one EDN form from `text` (surrounding whitespace and comments are
    allowed). Raises :class:`EdnParseError` (a ``mentat.ParseError`` and ``ValueError``)
    with the line and column of what is wrong."""
    r = _Reader(text)  # type: ignore[arg-type]
    forms = r.read_all()
    if not forms:
        raise r.error(len(r.text), "expected a form, found end of input")
    if len(forms) > 1:
        raise r.error(r.starts[1], "expected end of input, found another form")
    return forms[0]


def loads_prefix(text: str) -> Tuple[Any, str]:
    """Reads the first EDN form of `text`; returns it and the text after it. Raises
    :class:`EdnParseError` when `text` holds no form or the first is malformed."""
    r = _Reader(text)
    forms = r.read_all(limit=1)
    if not forms:
        raise r.error(len(r.text), "expected a form, found end of input")
    return forms[0], r.text[r.end:]


def loads_all(text: Union[str, bytes]) -> _ListT[Any]:
    """Reads every top-level EDN form of `text`, as a list."""
    return _Reader(text).read_all()  # type: ignore[arg-type]
