/* mentat's C API: the embedded Datomic-style database from C (C99 or later) and from any
 * language with a C foreign-function interface (the Python package uses it through ctypes).
 *
 *   mentat_store *s;
 *   char *err = NULL, *out = NULL;
 *   if (mentat_open("my.db", NULL, &s, &err) != MENTAT_OK) { puts(err); mentat_free(err); }
 *   mentat_transact(s, "[{:db/ident :person/name :db/valueType :db.type/string"
 *                      "  :db/cardinality :db.cardinality/one}]", MENTAT_EDN, &out, &err);
 *   mentat_free(out);
 *   mentat_q(s, "[:find ?n :where [_ :person/name ?n]]", NULL, NULL, MENTAT_JSON, &out, &err);
 *   mentat_free(out);
 *   mentat_close(s);
 *
 * Conventions, for every call:
 * - A call that can fail returns a mentat_code: MENTAT_OK (0), or the code of the error. On
 *   an error, when `err` is not NULL, *err is set to a message naming what was wrong (for EDN
 *   and queries with line:column); on success *err is left alone. Output pointers are set
 *   only on success.
 * - Text in and out is UTF-8 and NUL-terminated. Every string and handle a call returns is
 *   the caller's, released with mentat_free (strings) or the handle's own free or close.
 *   mentat_free(NULL) does nothing.
 * - No C++ exception crosses this API, and no input crashes the process: bad arguments (a
 *   NULL where a value is needed included) are MENTAT_INVALID_ARGUMENT errors.
 * - Thread safety: a mentat_store may be used from many threads at once (reads run in
 *   parallel and never wait for the writer; writes are serialized). A mentat_db and a
 *   mentat_prepared are immutable and may be shared between threads. A handle must not be
 *   freed while another thread uses it.
 * - Lifetimes: a mentat_db, mentat_prepared or mentat_listener keeps its store open: after
 *   mentat_close, the store stays usable through them and is closed when the last of them is
 *   freed.
 *
 * Formats (mentat_format): MENTAT_EDN prints results as EDN text that mentat's reader reads
 * back to equal values; MENTAT_JSON as JSON (keywords as ":ns/name" strings, instants as
 * RFC 3339 strings, uuids as strings, sets as arrays).
 */
#ifndef MENTAT_MENTAT_H_
#define MENTAT_MENTAT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MENTAT_API __attribute__((visibility("default")))
#else
#define MENTAT_API
#endif

/* The codes of mentat::Code, with the same numbers. */
typedef enum mentat_code {
  MENTAT_OK = 0,
  MENTAT_INVALID_ARGUMENT = 1, /* bad input from the caller */
  MENTAT_PARSE = 2,            /* text that does not parse; the message has line:column */
  MENTAT_NOT_FOUND = 3,        /* an entity, attribute, ident or file that does not exist */
  MENTAT_SCHEMA = 4,           /* a schema violation (unknown attribute, wrong type) */
  MENTAT_CONFLICT = 5,         /* a uniqueness or cardinality conflict */
  MENTAT_CAS_MISMATCH = 6,     /* :db/cas found another value */
  MENTAT_BUSY = 7,             /* the database is locked */
  MENTAT_INTERRUPTED = 8,      /* mentat_interrupt or a timeout stopped the work */
  MENTAT_IO = 9,               /* the file system, SQLite or PostgreSQL failed */
  MENTAT_CORRUPT = 10,         /* not a mentat store, or a damaged one */
  MENTAT_UNSUPPORTED = 11,     /* a newer store version, or a feature not available here */
  MENTAT_INTERNAL = 12         /* a bug in mentat */
} mentat_code;

typedef enum mentat_format { MENTAT_EDN = 0, MENTAT_JSON = 1 } mentat_format;

typedef struct mentat_store mentat_store;       /* an open store */
typedef struct mentat_db mentat_db;             /* a database value */
typedef struct mentat_prepared mentat_prepared; /* a parsed query bound to a database value */
typedef struct mentat_listener mentat_listener; /* a registered transaction listener */

/* mentat's version, "MAJOR.MINOR.PATCH". Static; do not free. */
MENTAT_API const char *mentat_version(void);
/* A short lower-case name of `code` ("parse error"). Static; do not free. */
MENTAT_API const char *mentat_code_name(int code);
/* Releases a string returned by this API. NULL does nothing. */
MENTAT_API void mentat_free(void *p);

/* ---- Stores ---- */

/* Opens (creating when missing) the store at `path`: a file, "" for a new in-memory store,
 * or a PostgreSQL URI ("postgresql://user@host/db") or libpq keyword string. `options_json`
 * (NULL or "" for the defaults) is an object of: "readOnly" (bool), "create" (bool),
 * "synchronous" ("off", "normal", "full", "extra"), "busyTimeout" (ms), "autoIndex" ("off",
 * "schema", "adaptive"), "replicas" (array of PostgreSQL standby names), "replicaWait" (ms). */
MENTAT_API int mentat_open(const char *path, const char *options_json, mentat_store **out,
                           char **err);
/* Releases the caller's handle; the store closes once no db, prepared query or listener
 * taken from it remains. NULL does nothing. */
MENTAT_API void mentat_close(mentat_store *store);
/* Makes every query running on `store` fail with MENTAT_INTERRUPTED; the store stays usable.
 * Callable from any thread, at any time before mentat_close. */
MENTAT_API void mentat_interrupt(mentat_store *store);
/* The last committed transaction's id into *out. */
MENTAT_API int mentat_last_tx(mentat_store *store, int64_t *out, char **err);

/* ---- Transactions ---- */

/* Transacts EDN transaction data (a vector of list forms and entity maps); the report
 * ({:tx-id N :tx-instant #inst ... :tempids {...} :tx-data [[e a v tx added] ...]}, attributes
 * as idents) into *report in `format` (report may be NULL). A failed transaction writes
 * nothing. */
MENTAT_API int mentat_transact(mentat_store *store, const char *edn, int format, char **report,
                               char **err);
/* The same, speculatively: the report as if transacted, then rolled back. */
MENTAT_API int mentat_with(mentat_store *store, const char *edn, int format, char **report,
                           char **err);

/* ---- Database values ---- */

/* The current database value. */
MENTAT_API int mentat_db_current(mentat_store *store, mentat_db **out, char **err);
/* `db` as of, or since, a point: the transaction `tx` (an id, as :tx-id reports it), or, when
 * `tx` is INT64_MIN, the last transaction at or before the instant `instant_micros`
 * (microseconds since the epoch). */
MENTAT_API int mentat_db_as_of(const mentat_db *db, int64_t tx, int64_t instant_micros,
                               mentat_db **out, char **err);
MENTAT_API int mentat_db_since(const mentat_db *db, int64_t tx, int64_t instant_micros,
                               mentat_db **out, char **err);
/* Every assertion and retraction ever made, as datoms with an added flag. */
MENTAT_API int mentat_db_history(const mentat_db *db, mentat_db **out, char **err);
/* Datomic's basis-t of `db` (0 before any transaction); -1 for NULL. */
MENTAT_API int64_t mentat_db_basis_t(const mentat_db *db);
MENTAT_API void mentat_db_free(mentat_db *db);

/* ---- Queries ---- */

/* Runs a Datalog query on `db` (mentat_q: on the store's current database). `inputs_edn`
 * (NULL for none) is an EDN vector of the values of the query's :in items after a leading
 * `$`, in order (a rule set as a vector of rules); `options_json` (NULL for none) is the
 * options object the CLI and the extensions take: {"inputs": [...], "asOf": t, "since": t,
 * "history": bool, "timeout": ms, "planner": bool, "disabledPasses": [...]} ("inputs" only
 * when `inputs_edn` is NULL). The result, in `format`, into *out: a relation as a vector of
 * rows, a collection as a vector, a tuple as a vector or nil, a scalar as a value or nil,
 * rows as maps with :keys/:strs/:syms. */
MENTAT_API int mentat_q(mentat_store *store, const char *query, const char *inputs_edn,
                        const char *options_json, int format, char **out, char **err);
MENTAT_API int mentat_db_q(const mentat_db *db, const char *query, const char *inputs_edn,
                           const char *options_json, int format, char **out, char **err);
/* The query's columns, as an EDN vector of strings (["?e" "(count ?i)"]) in `format`,
 * without running it. */
MENTAT_API int mentat_query_columns(const char *query, int format, char **out, char **err);
/* The plan of a query (what `.explain` shows), as text. */
MENTAT_API int mentat_db_explain(const mentat_db *db, const char *query, const char *inputs_edn,
                                 const char *options_json, char **out, char **err);

/* Parses `query` once; mentat_prepared_run then runs it on `db` any number of times, from
 * any thread, with new inputs, skipping the parse and reusing plans. */
MENTAT_API int mentat_prepare(const mentat_db *db, const char *query, mentat_prepared **out,
                              char **err);
MENTAT_API int mentat_prepared_run(const mentat_prepared *p, const char *inputs_edn,
                                   const char *options_json, int format, char **out, char **err);
MENTAT_API void mentat_prepared_free(mentat_prepared *p);

/* ---- Entities and datoms ---- */

/* Pulls `pattern` (EDN, e.g. "[:person/name {:person/friend [*]}]") for the entity `eid_edn`
 * (an id, an ident keyword or a lookup ref, as EDN text) into *out. */
MENTAT_API int mentat_pull(const mentat_db *db, const char *pattern, const char *eid_edn,
                           int format, char **out, char **err);
/* The entity `eid_edn` touched: {:db/id N attr value ...}, component entities included. */
MENTAT_API int mentat_entity(const mentat_db *db, const char *eid_edn, int format, char **out,
                             char **err);
/* Datoms of `index` (":eavt", ":aevt", ":avet", ":vaet"; the colon optional) whose leading
 * components equal the EDN vector `components_edn` (NULL or "[]" for the whole index), as
 * a vector of [e a v tx added] with attributes as idents. */
MENTAT_API int mentat_datoms(const mentat_db *db, const char *index, const char *components_edn,
                             int format, char **out, char **err);

/* ---- Listening ---- */

/* Called with each committed transaction's report (EDN text, as mentat_transact prints it;
 * valid only during the call) on the store's listener thread, one at a time in commit order. */
typedef void (*mentat_listen_fn)(void *user_data, const char *report_edn);
/* Calls `fn` with every transaction committed after this call. `attributes_edn` (NULL for
 * all) is an EDN vector of attribute idents: only transactions touching one of them. */
MENTAT_API int mentat_listen(mentat_store *store, const char *attributes_edn, mentat_listen_fn fn,
                             void *user_data, mentat_listener **out, char **err);
/* Stops the listener: once this returns, `fn` is not running and is never called again.
 * Must not be called from within `fn`. NULL does nothing. */
MENTAT_API void mentat_listener_free(mentat_listener *l);

#ifdef __cplusplus
}
#endif

#endif /* MENTAT_MENTAT_H_ */
