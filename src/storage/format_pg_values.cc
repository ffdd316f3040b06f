// The PostgreSQL functions of formatted, decimal and tuple values (format_pg.h): SQL text
// that format_pg.cc runs when it creates a store's schema, or upgrades one that lacks it.
#include "storage/format_pg.h"

namespace mentat::storage {

// Functions of formatted, decimal and tuple values (str of instants, uuids, bigints and
// bigdecs; comparisons of numbers with bigints and bigdecs; tuple, untuple and tuple
// comparisons), added after the first PostgreSQL stores were made: CREATE OR REPLACE, so
// that opening an older store of the same format adds them (PgInspect: kOld while
// mentat_tuple is missing). They read and write the bytes SQLite's C functions do.
const char* const kPgValueFunctions = R"sql(
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

}  // namespace mentat::storage
