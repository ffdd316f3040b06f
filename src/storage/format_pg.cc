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
  MENTAT_RETURN_IF_ERROR(c->Exec(kPgValueFunctions));
  MENTAT_RETURN_IF_ERROR(c->Exec(CrossTypeOperators()));
  MENTAT_RETURN_IF_ERROR(c->Exec(kViews));
  return c->Exec("INSERT INTO meta (key, value) VALUES ('format_version', " +
                 std::to_string(kFormatVersion) + ")");
}

Status PgUpgrade(Connection* c, int from, int to) {
  if (from == to) return c->Exec(kPgValueFunctions);  // PgInspect: functions missing
  return Status::Unsupported("no upgrade of a PostgreSQL store from format " +
                             std::to_string(from) + " to " + std::to_string(to));
}

}  // namespace mentat::storage
