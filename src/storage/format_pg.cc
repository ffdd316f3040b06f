#include "storage/format_pg.h"

#include <string>

namespace mentat::storage {

namespace {

// The tables of format 6 (the first PostgreSQL has), in the connection's schema. The value
// column `v` is jsonb (doc/postgres.md "Values"); `md5(v::text)` keys the unique indexes, so
// a value of any size can be a datom (B-tree entries are limited to about 2,700 bytes), and
// the value indexes hold `v` itself.
constexpr const char* kTables = R"sql(
CREATE TABLE meta (key text PRIMARY KEY, value bigint NOT NULL);
CREATE TABLE parts (part bigint PRIMARY KEY, start bigint NOT NULL, "end" bigint NOT NULL,
                    next bigint NOT NULL);
CREATE TABLE datoms (e bigint NOT NULL, a bigint NOT NULL, v jsonb NOT NULL,
                     tx bigint NOT NULL, ix smallint NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX datoms_eav ON datoms (e, a, md5(v::text));
CREATE INDEX datoms_avet ON datoms (a, v, e, tx) WHERE ix IS DISTINCT FROM 0;
CREATE INDEX datoms_aevt ON datoms (a, e, tx) WHERE ix IS DISTINCT FROM 1;
CREATE INDEX datoms_tx ON datoms (tx, a);
CREATE TABLE history (e bigint NOT NULL, a bigint NOT NULL, v jsonb NOT NULL,
                      tx bigint NOT NULL, rtx bigint NOT NULL);
CREATE UNIQUE INDEX history_eavt ON history (e, a, md5(v::text), tx);
CREATE INDEX history_avet ON history (a, v, e, tx, rtx);
CREATE INDEX history_tx ON history (tx);
CREATE INDEX history_rtx ON history (rtx);
CREATE TABLE fulltext_docs (id bigserial PRIMARY KEY, e bigint NOT NULL, a bigint NOT NULL,
                            text text NOT NULL,
                            tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED);
CREATE UNIQUE INDEX fulltext_docs_eav ON fulltext_docs (e, a, md5(text));
CREATE INDEX fulltext_docs_tsv ON fulltext_docs USING gin (tsv);
CREATE TABLE attr_stats (a bigint PRIMARY KEY, datoms bigint NOT NULL,
                         distinct_values bigint NOT NULL, distinct_at bigint NOT NULL,
                         distinct_entities bigint NOT NULL DEFAULT 0);
CREATE TABLE attr_values (a bigint NOT NULL, v jsonb NOT NULL, datoms bigint NOT NULL,
                          PRIMARY KEY (a, v));
CREATE TABLE auto_indexes (a bigint PRIMARY KEY, uses bigint NOT NULL, created bigint NOT NULL,
                           last_used bigint NOT NULL);
)sql";

// What the query compiler's PostgreSQL dialect (query/dialect_pg.cc) writes beyond
// PostgreSQL's own SQL: the value column is jsonb, the others bigint. SQL functions marked
// IMMUTABLE, so PostgreSQL inlines them (an index on a column they compare still applies).
// The fulltext search the query compiler reads (as SQLite's FTS5 table `fulltext`): each
// document's id and its text search vector.
constexpr const char* kViews = R"sql(
CREATE VIEW fulltext AS SELECT id AS rowid, tsv AS fulltext FROM fulltext_docs;
)sql";

constexpr const char* kFunctions = R"sql(
CREATE FUNCTION mentat_int(jsonb) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN jsonb_typeof($1) = 'number' AND ($1)::numeric = trunc(($1)::numeric)
                 AND abs(($1)::numeric) <= 9223372036854775807 THEN ($1)::numeric::bigint END$$;
CREATE FUNCTION mentat_num(jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN jsonb_typeof($1) = 'number' THEN ($1)::numeric END$$;
CREATE FUNCTION mentat_num(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1$$;
CREATE FUNCTION mentat_num(integer) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1::bigint$$;
CREATE FUNCTION mentat_num(numeric) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1$$;
CREATE FUNCTION mentat_num(double precision) RETURNS double precision LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT $1$$;
CREATE FUNCTION mentat_num(text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 ~ '^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$'
                THEN $1::numeric END$$;
CREATE FUNCTION mentat_text(jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN jsonb_typeof($1) = 'string' THEN $1 #>> '{}' ELSE $1::text END$$;
CREATE FUNCTION mentat_text(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1$$;
CREATE FUNCTION mentat_text(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1::text$$;
CREATE FUNCTION mentat_text(numeric) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1::text$$;
CREATE FUNCTION mentat_text(double precision) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT $1::text$$;
-- Any value as the value column's jsonb (UNION arms, COALESCE, rule relations); a text
-- literal as a JSON string.
CREATE FUNCTION mentat_json(jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1$$;
CREATE FUNCTION mentat_json(bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT ($1::text)::jsonb$$;
CREATE FUNCTION mentat_json(integer) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT ($1::text)::jsonb$$;
CREATE FUNCTION mentat_json(numeric) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT ($1::text)::jsonb$$;
CREATE FUNCTION mentat_json(double precision) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT to_jsonb($1)$$;
CREATE FUNCTION mentat_json(text) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT to_jsonb($1)$$;
CREATE FUNCTION mentat_json(boolean) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 THEN '1'::jsonb ELSE '0'::jsonb END$$;
CREATE FUNCTION mentat_json(bytea) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT jsonb_build_object('b', encode($1, 'hex'))$$;
-- The sort key of a keyword or symbol: its namespace, chr(1) (below every character a name
-- holds), its name; compared in "C" order, that is by namespace, then name.
CREATE FUNCTION mentat_named_key(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN strpos(t, '/') > 0
                THEN split_part(t, '/', 1) || chr(1) || substr(t, strpos(t, '/') + 1)
                ELSE chr(1) || t END
    FROM (SELECT CASE WHEN left($1, 1) = ':' THEN substr($1, 2) ELSE $1 END AS t) AS k$$;
CREATE FUNCTION mentat_named_key(jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT mentat_named_key(mentat_text($1))$$;
-- SQLite's typeof (the storage class) of a stored value.
CREATE FUNCTION mentat_typeof(jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE jsonb_typeof($1)
             WHEN 'number' THEN CASE WHEN $1::text ~ '[.eE]' THEN 'real' ELSE 'integer' END
             WHEN 'string' THEN 'text'
             WHEN 'object' THEN CASE WHEN $1 ? 'b' THEN 'blob' ELSE 'real' END
             WHEN 'boolean' THEN 'integer'
             ELSE 'null' END$$;
CREATE FUNCTION mentat_typeof(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 IS NULL THEN 'null' ELSE 'integer' END$$;
CREATE FUNCTION mentat_typeof(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 IS NULL THEN 'null' ELSE 'text' END$$;
-- A stored boolean (0 or 1) as a condition.
CREATE FUNCTION mentat_bool(jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1 <> '0'::jsonb$$;
CREATE FUNCTION mentat_bool(bigint) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1 <> 0$$;
CREATE FUNCTION mentat_bool(boolean) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1$$;
CREATE FUNCTION mentat_div(bigint, bigint) RETURNS bigint LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT $1 / NULLIF($2, 0)$$;
CREATE FUNCTION mentat_div(numeric, numeric) RETURNS numeric LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN scale($1) = 0 AND scale($2) = 0 THEN trunc($1 / NULLIF($2, 0))
                ELSE $1 / NULLIF($2, 0) END$$;
CREATE FUNCTION mentat_div(double precision, double precision) RETURNS double precision
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$SELECT $1 / NULLIF($2, 0)$$;
CREATE FUNCTION mentat_exact_div(numeric, numeric) RETURNS numeric LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $2 = 0 THEN NULL
                WHEN scale($1) = 0 AND scale($2) = 0 AND mod($1, $2) = 0 THEN div($1, $2)
                ELSE ((($1)::double precision / ($2)::double precision)::text)::numeric END$$;
CREATE FUNCTION mentat_is_integer(jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT jsonb_typeof($1) = 'number' AND $1::text !~ '[.eE]'$$;
CREATE FUNCTION mentat_is_integer(bigint) RETURNS boolean LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT true$$;
CREATE FUNCTION mentat_is_integer(numeric) RETURNS boolean LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT scale($1) = 0$$;
CREATE FUNCTION mentat_is_real(jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT (jsonb_typeof($1) = 'number' AND $1::text ~ '[.eE]')
                            OR (jsonb_typeof($1) = 'object' AND $1 ? 'd')$$;
CREATE FUNCTION mentat_is_real(bigint) RETURNS boolean LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT false$$;
CREATE FUNCTION mentat_is_real(numeric) RETURNS boolean LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT scale($1) > 0$$;
CREATE FUNCTION mentat_substr(text, numeric) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $2 < 0 THEN right($1, (-$2)::int) WHEN $2 = 0 THEN $1
                ELSE substr($1, $2::int) END$$;
CREATE FUNCTION mentat_substr(text, numeric, numeric) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $2 < 0 THEN substr($1, greatest(length($1) + $2::int + 1, 1), $3::int)
                WHEN $2 = 0 THEN substr($1, 1, greatest($3::int - 1, 0))
                ELSE substr($1, $2::int, $3::int) END$$;
-- (re-find pattern s), (re-matches pattern s): the pattern first, as the Datalog call.
CREATE FUNCTION mentat_re_find(text, text) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT (regexp_match($2, '(' || $1 || ')'))[1]$$;
CREATE FUNCTION mentat_re_matches(text, text) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT CASE WHEN $2 ~ ('^(?:' || $1 || ')$') THEN $2 END$$;
CREATE FUNCTION mentat_re_find_group(text, text, bigint) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $3 = 0 THEN (regexp_match($2, '(' || $1 || ')'))[1]
                ELSE (regexp_match($2, $1))[$3] END$$;
CREATE FUNCTION mentat_re_matches_group(text, text, bigint) RETURNS text LANGUAGE sql
  IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $3 = 0 THEN (regexp_match($2, '^(' || $1 || ')$'))[1]
                ELSE (regexp_match($2, '^(?:' || $1 || ')$'))[$3] END$$;
-- Clojure's subs: 0-based start, exclusive end; NULL out of range.
CREATE FUNCTION mentat_subs(text, numeric) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $2 < 0 OR $2 > length($1) THEN NULL ELSE substr($1, $2::int + 1) END$$;
CREATE FUNCTION mentat_subs(text, numeric, numeric) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $2 < 0 OR $3 < $2 OR $3 > length($1) THEN NULL
                ELSE substr($1, $2::int + 1, ($3 - $2)::int) END$$;
-- Clojure's str of a stored value: a string as itself, a number as its digits.
CREATE FUNCTION mentat_str(jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT mentat_text($1)$$;
CREATE FUNCTION mentat_str(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1$$;
CREATE FUNCTION mentat_str(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1::text$$;
CREATE FUNCTION mentat_str(numeric) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
  $$SELECT $1::text$$;
CREATE FUNCTION mentat_not_on_postgresql(text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS
  $$BEGIN RAISE EXCEPTION '% is not supported on a PostgreSQL store yet', $1
           USING ERRCODE = '0A000'; END$$;
CREATE FUNCTION mentat_jsum(numeric, jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN mentat_num($2) IS NULL THEN $1 WHEN $1 IS NULL THEN mentat_num($2)
                ELSE $1 + mentat_num($2) END$$;
CREATE AGGREGATE sum(jsonb) (SFUNC = mentat_jsum, STYPE = numeric);
CREATE FUNCTION mentat_javg(numeric[], jsonb) RETURNS numeric[] LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN mentat_num($2) IS NULL THEN $1
                ELSE ARRAY[$1[1] + mentat_num($2), $1[2] + 1] END$$;
CREATE FUNCTION mentat_javg_final(numeric[]) RETURNS double precision LANGUAGE sql
  IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1[2] = 0 THEN NULL ELSE ($1[1] / $1[2])::double precision END$$;
CREATE AGGREGATE avg(jsonb) (SFUNC = mentat_javg, STYPE = numeric[],
                             FINALFUNC = mentat_javg_final, INITCOND = '{0,0}');
CREATE FUNCTION mentat_jmax(jsonb, jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT CASE WHEN $1 IS NULL OR $2 > $1 THEN $2 ELSE $1 END$$;
CREATE FUNCTION mentat_jmin(jsonb, jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT CASE WHEN $1 IS NULL OR $2 < $1 THEN $2 ELSE $1 END$$;
CREATE AGGREGATE max(jsonb) (SFUNC = mentat_jmax, STYPE = jsonb);
CREATE FUNCTION mentat_named_jmax(jsonb, jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 IS NULL OR (mentat_named_key($2) COLLATE "C") >
                                   (mentat_named_key($1) COLLATE "C") THEN $2 ELSE $1 END$$;
CREATE FUNCTION mentat_named_jmin(jsonb, jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 IS NULL OR (mentat_named_key($2) COLLATE "C") <
                                   (mentat_named_key($1) COLLATE "C") THEN $2 ELSE $1 END$$;
CREATE AGGREGATE mentat_named_max(jsonb) (SFUNC = mentat_named_jmax, STYPE = jsonb);
CREATE AGGREGATE mentat_named_min(jsonb) (SFUNC = mentat_named_jmin, STYPE = jsonb);
CREATE AGGREGATE min(jsonb) (SFUNC = mentat_jmin, STYPE = jsonb);
)sql";

// Functions of formatted, decimal and tuple values (str of instants, uuids, bigints and
// bigdecs; comparisons of numbers with bigints and bigdecs; tuple, untuple and tuple
// comparisons), added after the first PostgreSQL stores were made: CREATE OR REPLACE, so
// that opening an older store of the same format adds them (PgInspect: kOld while
// mentat_tuple is missing). They read and write the bytes SQLite's C functions do.
constexpr const char* kValueFunctions = R"sql(
-- (str ?instant): edn::FormatInstant's text, ISO 8601 in UTC with milliseconds, or
-- microseconds when they need six digits; a year outside 0000-9999 with its sign.
CREATE OR REPLACE FUNCTION mentat_fmt_inst(bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE
  PARALLEL SAFE AS $$
DECLARE
  us bigint;
  ts timestamp;
  y bigint;
BEGIN
  IF $1 IS NULL THEN RETURN NULL; END IF;
  us := (($1 % 1000000) + 1000000) % 1000000;
  ts := timestamp '1970-01-01' + make_interval(secs => (($1 - us) / 1000000)::double precision);
  y := extract(year FROM ts);
  IF y < 0 THEN y := y + 1; END IF;  -- PostgreSQL has no year 0: 1 BC is ISO 8601's 0000
  RETURN CASE WHEN y < 0 THEN '-' || lpad((-y)::text, 4, '0')
              WHEN y > 9999 THEN '+' || y::text ELSE lpad(y::text, 4, '0') END ||
         to_char(ts, '-MM-DD"T"HH24:MI:SS') || '.' ||
         CASE WHEN us % 1000 = 0 THEN lpad((us / 1000)::text, 3, '0')
              ELSE lpad(us::text, 6, '0') END || 'Z';
END$$;
CREATE OR REPLACE FUNCTION mentat_fmt_inst(jsonb) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT mentat_fmt_inst(mentat_int($1))$$;
-- (str ?uuid): the canonical lowercase text of a stored uuid ({"b": 32 hex digits}).
CREATE OR REPLACE FUNCTION mentat_fmt_uuid(jsonb) RETURNS text LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN length($1 ->> 'b') = 32 THEN
                substr($1 ->> 'b', 1, 8) || '-' || substr($1 ->> 'b', 9, 4) || '-' ||
                substr($1 ->> 'b', 13, 4) || '-' || substr($1 ->> 'b', 17, 4) || '-' ||
                substr($1 ->> 'b', 21, 12) END$$;
-- The decimal key (doc/format.md "Decimal keys") of a number, stored as bigints and bigdecs
-- are ({"b": hex}), so that jsonb compares it with them: 0x80 for zero; 0x81, the exponent
-- E of 0.DIGITS x 10^E offset by 2^63 (8 bytes), the digits, 0x00 for a positive number;
-- 0x7F and the complement of those bytes for a negative one. NULL for NaN and infinities.
CREATE OR REPLACE FUNCTION mentat_decimal_key(numeric) RETURNS jsonb LANGUAGE plpgsql
  IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  t text;
  ip text;
  fp text;
  digits text;
  e bigint;
  body text;
BEGIN
  IF $1 IS NULL OR $1 = 'NaN'::numeric OR abs($1) = 'Infinity'::numeric THEN RETURN NULL; END IF;
  IF $1 = 0 THEN RETURN jsonb_build_object('b', '80'); END IF;
  t := abs($1)::text;  -- plain digits: numeric's text has no exponent
  ip := ltrim(split_part(t, '.', 1), '0');
  fp := split_part(t, '.', 2);
  IF ip <> '' THEN
    e := length(ip);
    digits := rtrim(ip || fp, '0');
  ELSE
    e := -(length(fp) - length(ltrim(fp, '0')));
    digits := rtrim(ltrim(fp, '0'), '0');
  END IF;
  body := lpad(to_hex(e # (-9223372036854775807 - 1)), 16, '0') ||
          encode(convert_to(digits, 'UTF8'), 'hex') || '00';
  IF $1 < 0 THEN
    RETURN jsonb_build_object('b', '7f' || translate(body, '0123456789abcdef', 'fedcba9876543210'));
  END IF;
  RETURN jsonb_build_object('b', '81' || body);
END$$;
CREATE OR REPLACE FUNCTION mentat_decimal_key(jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN jsonb_typeof($1) = 'object' AND $1 ->> 'b' IS NOT NULL THEN $1
                WHEN jsonb_typeof($1) = 'number' THEN mentat_decimal_key(($1)::numeric) END$$;
CREATE OR REPLACE FUNCTION mentat_decimal_key(bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT mentat_decimal_key($1::numeric)$$;
CREATE OR REPLACE FUNCTION mentat_decimal_key(integer) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT mentat_decimal_key($1::numeric)$$;
-- A double by its shortest text, as SQLite's mentat_decimal_key takes it (0.1 is 0.1M).
CREATE OR REPLACE FUNCTION mentat_decimal_key(double precision) RETURNS jsonb LANGUAGE sql
  IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 IN ('NaN', 'Infinity', '-Infinity') THEN NULL
                ELSE mentat_decimal_key($1::text::numeric) END$$;
CREATE OR REPLACE FUNCTION mentat_decimal_key(text) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT mentat_decimal_key(mentat_num($1))$$;
-- (str ?n) of a bigint (integer <> 0) or bigdec key, as util/decimal.h's Format prints it.
CREATE OR REPLACE FUNCTION mentat_fmt_decimal(jsonb, integer) RETURNS text LANGUAGE plpgsql
  IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  h text := $1 ->> 'b';
  body text;
  e bigint;
  digits text;
  n bigint;
  sign text;
BEGIN
  IF h IS NULL THEN RETURN NULL; END IF;
  IF h = '80' THEN RETURN '0'; END IF;
  IF length(h) < 22 OR left(h, 2) NOT IN ('81', '7f') THEN RETURN NULL; END IF;
  sign := CASE WHEN left(h, 2) = '7f' THEN '-' ELSE '' END;
  body := substr(h, 3);
  IF sign = '-' THEN body := translate(body, '0123456789abcdef', 'fedcba9876543210'); END IF;
  IF right(body, 2) <> '00' THEN RETURN NULL; END IF;
  e := ('x' || left(body, 16))::bit(64)::bigint # (-9223372036854775807 - 1);
  digits := convert_from(decode(substr(body, 17, length(body) - 18), 'hex'), 'UTF8');
  n := length(digits);
  IF $2 <> 0 AND e >= n THEN RETURN sign || digits || repeat('0', (e - n)::int); END IF;
  IF e >= -6 AND e <= 40 THEN
    IF e <= 0 THEN RETURN sign || '0.' || repeat('0', (-e)::int) || digits; END IF;
    IF e >= n THEN RETURN sign || digits || repeat('0', (e - n)::int); END IF;
    RETURN sign || left(digits, e::int) || '.' || substr(digits, e::int + 1);
  END IF;
  RETURN sign || left(digits, 1) || CASE WHEN n > 1 THEN '.' || substr(digits, 2) ELSE '' END ||
         'E' || CASE WHEN e - 1 < 0 THEN '-' ELSE '+' END || abs(e - 1)::text;
END$$;
-- Stored tuples (doc/format.md "Tuple keys", schema/tuple.cc), {"b": hex} in the value
-- column: element i's tag byte and payload (hex; an escaped payload unescaped), or NULLs
-- past the end or for bytes no tuple key has.
CREATE OR REPLACE FUNCTION mentat_tuple_part(jsonb, bigint, OUT tag integer, OUT payload text)
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  h text := $1 ->> 'b';
  n integer;
  p integer := 1;
  k bigint := 0;
  b text;
BEGIN
  IF h IS NULL OR $2 IS NULL OR $2 < 0 THEN RETURN; END IF;
  n := length(h);
  WHILE p <= n LOOP
    tag := ('x' || substr(h, p, 2))::bit(8)::integer;
    p := p + 2;
    payload := '';
    IF tag IN (1, 2, 3) THEN
      NULL;
    ELSIF tag IN (16, 17, 32) THEN  -- long, double, instant: 8 bytes
      payload := substr(h, p, 16);
      p := p + 16;
    ELSIF tag = 64 THEN  -- uuid: 16 bytes
      payload := substr(h, p, 32);
      p := p + 32;
    ELSE  -- escaped: 00 FF is a 00, 00 01 ends it
      LOOP
        IF p > n THEN tag := NULL; payload := NULL; RETURN; END IF;
        b := substr(h, p, 2);
        p := p + 2;
        IF b = '00' THEN
          b := substr(h, p, 2);
          p := p + 2;
          EXIT WHEN b = '01';
          IF b <> 'ff' THEN tag := NULL; payload := NULL; RETURN; END IF;
        END IF;
        payload := payload || b;
      END LOOP;
    END IF;
    IF k = $2 THEN RETURN; END IF;
    k := k + 1;
  END LOOP;
  tag := NULL;
  payload := NULL;
END$$;
-- 8 order-preserving bytes (the sign bit flipped) as the bigint they hold.
CREATE OR REPLACE FUNCTION mentat_tuple_long(text) RETURNS bigint LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS $$SELECT ('x' || $1)::bit(64)::bigint # (-9223372036854775807 - 1)$$;
-- A double's order-preserving bits (positive: the sign bit set; negative: every bit
-- flipped) as the double.
CREATE OR REPLACE FUNCTION mentat_tuple_double(text) RETURNS double precision LANGUAGE plpgsql
  IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  h text := $1;
  top integer := ('x' || left($1, 1))::bit(4)::integer;
  bits bigint;
  e integer;
  m bigint;
  v double precision;
BEGIN
  IF top >= 8 THEN
    h := to_hex(top - 8) || substr(h, 2);
  ELSE
    h := translate(h, '0123456789abcdef', 'fedcba9876543210');
  END IF;
  bits := ('x' || lpad(h, 16, '0'))::bit(64)::bigint;  -- the IEEE 754 bits
  e := ((bits >> 52) & 2047)::integer;
  m := bits & 4503599627370495;
  IF e = 2047 THEN
    v := CASE WHEN m = 0 THEN 'Infinity'::double precision ELSE 'NaN'::double precision END;
  ELSIF e = 0 THEN
    v := m::double precision * power(2::double precision, -1074);
  ELSE
    v := (m + 4503599627370496)::double precision * power(2::double precision, e - 1075);
  END IF;
  RETURN CASE WHEN bits < 0 THEN -v ELSE v END;
END$$;
-- A double as the value column stores it: a JSON number; NaN and the infinities as
-- {"d": "NaN"}, ...
CREATE OR REPLACE FUNCTION mentat_jdouble(double precision) RETURNS jsonb LANGUAGE sql
  IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE WHEN $1 IN ('NaN', 'Infinity', '-Infinity') THEN jsonb_build_object('d', $1::text)
                ELSE to_jsonb($1) END$$;
-- Element i as the value column stores a value of its type (NULL for nil).
CREATE OR REPLACE FUNCTION mentat_tuple_get(jsonb, bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE
  PARALLEL SAFE AS
  $$SELECT CASE WHEN tag IS NULL OR tag = 1 THEN NULL WHEN tag = 2 THEN '0'::jsonb
                WHEN tag = 3 THEN '1'::jsonb
                WHEN tag IN (16, 32) THEN to_jsonb(mentat_tuple_long(payload))
                WHEN tag = 17 THEN mentat_jdouble(mentat_tuple_double(payload))
                WHEN tag IN (48, 49, 50, 51)
                  THEN to_jsonb(convert_from(decode(payload, 'hex'), 'UTF8'))
                ELSE jsonb_build_object('b', payload) END
     FROM mentat_tuple_part($1, $2)$$;
-- Element i's type as query::TypeCode (-1 - ValueType); NULL for nil.
CREATE OR REPLACE FUNCTION mentat_tuple_type(jsonb, bigint) RETURNS bigint LANGUAGE sql
  IMMUTABLE PARALLEL SAFE AS
  $$SELECT CASE tag WHEN 2 THEN -6 WHEN 3 THEN -6 WHEN 16 THEN -3 WHEN 17 THEN -4
                    WHEN 18 THEN -10 WHEN 19 THEN -11 WHEN 32 THEN -7 WHEN 48 THEN -5
                    WHEN 49 THEN -2 WHEN 50 THEN -14 WHEN 51 THEN -13 WHEN 64 THEN -8
                    WHEN 65 THEN -9 END
     FROM mentat_tuple_part($1, $2)$$;
-- Hex with each 00 byte escaped (00 FF) and the end marked (00 01).
CREATE OR REPLACE FUNCTION mentat_tuple_escape(text) RETURNS text LANGUAGE plpgsql IMMUTABLE
  PARALLEL SAFE AS $$
DECLARE
  out text := '';
  b text;
BEGIN
  FOR j IN 0 .. length($1) / 2 - 1 LOOP
    b := substr($1, 2 * j + 1, 2);
    out := out || b || CASE WHEN b = '00' THEN 'ff' ELSE '' END;
  END LOOP;
  RETURN out || '0001';
END$$;
-- The stored tuple of (ValueType code, value) pairs, each value as the value column stores
-- one of that type (NULL: nil); NULL when they make no storable tuple (a NaN).
CREATE OR REPLACE FUNCTION mentat_tuple(VARIADIC jsonb[]) RETURNS jsonb LANGUAGE plpgsql
  IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  out text := '';
  code integer;
  x jsonb;
  d double precision;
  h text;
  top integer;
BEGIN
  FOR k IN 1 .. coalesce(array_length($1, 1), 0) / 2 LOOP
    code := ($1[2 * k - 1])::integer;
    x := $1[2 * k];
    IF x IS NULL OR jsonb_typeof(x) = 'null' THEN
      out := out || '01';
    ELSIF code = 5 THEN  -- boolean, stored as 0 or 1
      out := out || CASE WHEN x IN ('true'::jsonb, '1'::jsonb) THEN '03' ELSE '02' END;
    ELSIF code IN (0, 2, 6) THEN  -- ref, long, instant
      out := out || CASE WHEN code = 6 THEN '20' ELSE '10' END ||
             lpad(to_hex(mentat_int(x) # (-9223372036854775807 - 1)), 16, '0');
    ELSIF code IN (3, 11) THEN  -- double, float
      d := CASE WHEN jsonb_typeof(x) = 'object' THEN (x ->> 'd')::double precision
                ELSE (x)::numeric::double precision END;
      IF d = 'NaN'::double precision THEN RETURN NULL; END IF;
      IF d = 0 THEN d := 0; END IF;  -- -0.0 as 0.0
      h := encode(float8send(d), 'hex');
      top := ('x' || left(h, 1))::bit(4)::integer;
      out := out || '11' || CASE WHEN top >= 8
                                 THEN translate(h, '0123456789abcdef', 'fedcba9876543210')
                                 ELSE to_hex(top + 8) || substr(h, 2) END;
    ELSIF code IN (4, 1, 13, 12) THEN  -- string, keyword, symbol, uri
      out := out || CASE code WHEN 4 THEN '30' WHEN 1 THEN '31' WHEN 13 THEN '32' ELSE '33' END ||
             mentat_tuple_escape(encode(convert_to(x #>> '{}', 'UTF8'), 'hex'));
    ELSIF code IN (9, 10) THEN  -- bigint, bigdec: the decimal key
      out := out || CASE WHEN code = 9 THEN '12' ELSE '13' END ||
             mentat_tuple_escape(mentat_decimal_key(x) ->> 'b');
    ELSIF code = 7 THEN
      out := out || '40' || (x ->> 'b');
    ELSIF code = 8 THEN
      out := out || '41' || mentat_tuple_escape(x ->> 'b');
    ELSE
      RAISE EXCEPTION 'mentat_tuple: bad element type %', code;
    END IF;
  END LOOP;
  RETURN jsonb_build_object('b', out);
END$$;
)sql";

// Comparison operators between jsonb (the value column) and the typed columns and
// parameters it meets (entity ids, numbers, text): `v op x` compares as two jsonb values.
// Each is a SQL function PostgreSQL inlines, which it does only for a body of immutable
// functions: a number becomes jsonb by its text (`(x::text)::jsonb`, not the stable
// to_jsonb), and text equality compares the string's text. Equality with bigint also states
// `x = mentat_int(v)`, so an index on either side can drive a join.
std::string CrossTypeOperators() {
  struct Op {
    const char *sym, *name, *commutator, *negator;
  };
  static const Op kOps[] = {{"=", "eq", "=", "<>"}, {"<>", "ne", "<>", "="},
                            {"<", "lt", ">", ">="}, {"<=", "le", ">=", ">"},
                            {">", "gt", "<", "<="}, {">=", "ge", "<=", "<"}};
  struct Type {
    const char *sql, *tag;
    const char* json;  // the type's value `X` as jsonb
  };
  static const Type kTypes[] = {{"bigint", "b", "(X::text)::jsonb"},
                                {"integer", "i", "(X::text)::jsonb"},
                                {"numeric", "n", "(X::text)::jsonb"},
                                {"double precision", "d", "to_jsonb(X)"},
                                {"text", "t", "to_jsonb(X)"}};
  auto json = [](const Type& t, const char* x) {
    std::string out = t.json;
    out.replace(out.find('X'), 1, x);
    return out;
  };
  std::string out;
  for (const Type& t : kTypes) {
    for (const Op& op : kOps) {
      const std::string jt = std::string("mentat_j") + t.tag + "_" + op.name;
      const std::string tj = std::string("mentat_") + t.tag + "j_" + op.name;
      const bool eq_int = std::string(op.name) == "eq" && std::string(t.tag) == "b";
      const bool text_eq = std::string(op.name) == "eq" && std::string(t.tag) == "t";
      const std::string jt_body = text_eq ? "jsonb_typeof($1) = 'string' AND ($1 #>> '{}') = $2"
                                          : "$1 " + std::string(op.sym) + " " + json(t, "$2") +
                                                (eq_int ? " AND $2 = mentat_int($1)" : "");
      const std::string tj_body = text_eq ? "jsonb_typeof($2) = 'string' AND ($2 #>> '{}') = $1"
                                          : json(t, "$1") + " " + op.sym + " $2" +
                                                (eq_int ? " AND $1 = mentat_int($2)" : "");
      out += "CREATE FUNCTION " + jt + "(jsonb, " + t.sql +
             ") RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$SELECT " + jt_body +
             "$$;\n";
      out += "CREATE FUNCTION " + tj + "(" + t.sql +
             ", jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$SELECT " +
             tj_body + "$$;\n";
      out += std::string("CREATE OPERATOR ") + op.sym + " (LEFTARG = jsonb, RIGHTARG = " + t.sql +
             ", FUNCTION = " + jt + ", COMMUTATOR = " + op.commutator +
             ", NEGATOR = " + op.negator + ");\n";
      out += std::string("CREATE OPERATOR ") + op.sym + " (LEFTARG = " + t.sql +
             ", RIGHTARG = jsonb, FUNCTION = " + tj + ", COMMUTATOR = " + op.commutator +
             ", NEGATOR = " + op.negator + ");\n";
    }
  }
  return out;
}

}  // namespace

Result<FileState> PgInspect(Connection* c, int* version) {
  *version = 0;
  MENTAT_ASSIGN_OR_RETURN(
      auto tables,
      c->Prepare("SELECT count(*) FROM information_schema.tables WHERE table_schema = ?1"));
  tables.BindText(1, c->pg_schema());
  MENTAT_ASSIGN_OR_RETURN(bool row, tables.Step());
  const int64_t n = row ? tables.ColumnInt(0) : 0;
  if (n == 0) return FileState::kEmpty;
  MENTAT_ASSIGN_OR_RETURN(
      auto meta,
      c->Prepare("SELECT count(*) FROM information_schema.tables WHERE table_schema = ?1 AND "
                 "table_name = 'meta'"));
  meta.BindText(1, c->pg_schema());
  MENTAT_ASSIGN_OR_RETURN(row, meta.Step());
  if (!row || meta.ColumnInt(0) == 0)
    return Status::Corrupt("not a mentat store: schema '" + c->pg_schema() +
                           "' has other tables and no meta table; name another schema "
                           "(?schema=NAME)");
  MENTAT_ASSIGN_OR_RETURN(int64_t v,
                          c->QueryInt("SELECT value FROM meta WHERE key = 'format_version'", 0));
  if (v == 0) return Status::Corrupt("not a mentat store: no format version in its meta table");
  *version = static_cast<int>(v);
  if (v > kFormatVersion)
    return Status::Unsupported("store format " + std::to_string(v) +
                               " is newer than this mentat supports (" +
                               std::to_string(kFormatVersion) + "); upgrade mentat");
  if (v < kFormatVersion) return FileState::kOld;
  MENTAT_ASSIGN_OR_RETURN(
      auto fn, c->Prepare("SELECT to_regprocedure(?1 || '.mentat_tuple(jsonb[])') IS NOT NULL"));
  fn.BindText(1, c->pg_schema());
  MENTAT_ASSIGN_OR_RETURN(row, fn.Step());
  return row && fn.ColumnInt(0) != 0 ? FileState::kCurrent : FileState::kOld;
}

Status PgCreateTables(Connection* c) {
  MENTAT_RETURN_IF_ERROR(c->Exec("CREATE SCHEMA IF NOT EXISTS " + c->pg_schema()));
  MENTAT_RETURN_IF_ERROR(c->Exec(kTables));
  MENTAT_RETURN_IF_ERROR(c->Exec(kFunctions));
  MENTAT_RETURN_IF_ERROR(c->Exec(kValueFunctions));
  MENTAT_RETURN_IF_ERROR(c->Exec(CrossTypeOperators()));
  MENTAT_RETURN_IF_ERROR(c->Exec(kViews));
  return c->Exec("INSERT INTO meta (key, value) VALUES ('format_version', " +
                 std::to_string(kFormatVersion) + ")");
}

Status PgUpgrade(Connection* c, int from, int to) {
  if (from == to) return c->Exec(kValueFunctions);  // PgInspect: functions missing
  return Status::Unsupported("no upgrade of a PostgreSQL store from format " +
                             std::to_string(from) + " to " + std::to_string(to));
}

}  // namespace mentat::storage
