/* The C API (include/mentat/mentat.h) from a C11 program: every call, its error paths, and
 * several threads on one store. Exits 0 when every check holds, else prints the failed
 * checks and exits 1.
 *
 *   capi_test [DIR]   (DIR: where to put the store file; default /tmp) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mentat/mentat.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* Runs `call` (an expression returning a code), expects MENTAT_OK, and prints the error. */
#define OK(call)                                                               \
  do {                                                                         \
    char *err_ = NULL;                                                         \
    char **errp_ = &err_;                                                      \
    (void)errp_;                                                               \
    int rc_ = (call);                                                          \
    if (rc_ != MENTAT_OK) {                                                    \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, \
              mentat_code_name(rc_), err_ ? err_ : "(no message)");            \
      failures++;                                                              \
    }                                                                          \
    mentat_free(err_);                                                         \
  } while (0)

static int contains(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static const char *kSchema =
    "[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality "
    ":db.cardinality/one :db/unique :db.unique/identity}"
    " {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}"
    " {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality "
    ":db.cardinality/many}]";

static void test_basics(mentat_store *s) {
  char *out = NULL, *err = NULL;
  OK(mentat_transact(s, kSchema, MENTAT_EDN, NULL, errp_));
  OK(mentat_transact(s,
                     "[{:db/id \"a\" :person/name \"Ada\" :person/age 36 :person/friend \"b\"}"
                     " {:db/id \"b\" :person/name \"Bob\" :person/age 41}]",
                     MENTAT_JSON, &out, errp_));
  CHECK(contains(out, "\":tempids\""));
  CHECK(contains(out, "\"a\""));
  mentat_free(out);
  out = NULL;

  /* Each result shape, in EDN and JSON. */
  OK(mentat_q(s, "[:find ?n :where [_ :person/name ?n]]", NULL, NULL, MENTAT_EDN, &out, errp_));
  CHECK(contains(out, "[\"Ada\"]") && contains(out, "[\"Bob\"]"));
  mentat_free(out);
  out = NULL;
  OK(mentat_q(s, "[:find ?a . :in ?n :where [?e :person/name ?n] [?e :person/age ?a]]", "[\"Bob\"]",
              NULL, MENTAT_EDN, &out, errp_));
  CHECK(out && strcmp(out, "41") == 0);
  mentat_free(out);
  out = NULL;
  OK(mentat_q(s, "[:find [?n ...] :where [?e :person/age ?a] [(> ?a 40)] [?e :person/name ?n]]",
              NULL, NULL, MENTAT_JSON, &out, errp_));
  CHECK(out && strcmp(out, "[\"Bob\"]") == 0);
  mentat_free(out);
  out = NULL;
  OK(mentat_q(s, "[:find ?a :in ?n :where [?e :person/name ?n] [?e :person/age ?a]]", NULL,
              "{\"inputs\": [\"Ada\"]}", MENTAT_JSON, &out, errp_));
  CHECK(out && strcmp(out, "[[36]]") == 0);
  mentat_free(out);
  out = NULL;
  OK(mentat_q(s, "[:find ?n ?a :keys name age :where [?e :person/name ?n] [?e :person/age ?a]]",
              NULL, NULL, MENTAT_EDN, &out, errp_));
  CHECK(contains(out, ":name \"Ada\"") && contains(out, ":age 41"));
  mentat_free(out);
  out = NULL;
  /* A rule set input. */
  OK(mentat_q(s,
              "[:find ?fn :in % :where [?e :person/name \"Ada\"] (friend ?e ?f) "
              "[?f :person/name ?fn]]",
              "[[[(friend ?a ?b) [?a :person/friend ?b]]]]", NULL, MENTAT_EDN, &out, errp_));
  CHECK(out && strcmp(out, "[[\"Bob\"]]") == 0);
  mentat_free(out);
  out = NULL;

  OK(mentat_query_columns("[:find ?e (count ?x) :where [?e :person/friend ?x]]", MENTAT_EDN, &out,
                          errp_));
  CHECK(out && strcmp(out, "[\"?e\" \"(count ?x)\"]") == 0);
  mentat_free(out);
  out = NULL;

  int64_t last = 0;
  OK(mentat_last_tx(s, &last, errp_));
  CHECK(last > 0);

  /* Database values: as-of the schema transaction sees no people; history sees them. */
  mentat_db *now = NULL, *before = NULL, *hist = NULL, *since = NULL;
  OK(mentat_db_current(s, &now, errp_));
  CHECK(mentat_db_basis_t(now) >= 2);
  OK(mentat_db_as_of(now, last - 1, 0, &before, errp_));
  OK(mentat_db_q(before, "[:find (count ?e) . :where [?e :person/name]]", NULL, NULL, MENTAT_EDN,
                 &out, errp_));
  CHECK(out && strcmp(out, "nil") == 0);
  mentat_free(out);
  out = NULL;
  OK(mentat_db_since(now, last - 1, 0, &since, errp_));
  OK(mentat_db_q(since, "[:find (count ?e) . :where [?e :person/name]]", NULL, NULL, MENTAT_EDN,
                 &out, errp_));
  CHECK(out && strcmp(out, "2") == 0);
  mentat_free(out);
  out = NULL;
  OK(mentat_transact(s, "[{:person/name \"Bob\" :person/age 42}]", MENTAT_EDN, NULL, errp_));
  OK(mentat_db_history(now, &hist, errp_));
  /* `now` was taken before Bob turned 42: its history does not have it, the store's does. */
  OK(mentat_db_q(hist, "[:find ?a ?added :where [?e :person/age ?a _ ?added] [(> ?a 40)]]", NULL,
                 NULL, MENTAT_EDN, &out, errp_));
  CHECK(contains(out, "[41 true]") && !contains(out, "42"));
  mentat_free(out);
  out = NULL;
  OK(mentat_q(s, "[:find ?a ?added :where [?e :person/age ?a _ ?added] [(> ?a 40)]]", NULL,
              "{\"history\": true}", MENTAT_EDN, &out, errp_));
  CHECK(contains(out, "[41 false]") && contains(out, "[42 true]"));
  mentat_free(out);
  out = NULL;

  /* Pull, entity, datoms. */
  OK(mentat_pull(now, "[:person/name {:person/friend [:person/name]}]", "[:person/name \"Ada\"]",
                 MENTAT_EDN, &out, errp_));
  CHECK(contains(out, ":person/friend [{:person/name \"Bob\"}]"));
  mentat_free(out);
  out = NULL;
  OK(mentat_entity(now, "[:person/name \"Bob\"]", MENTAT_JSON, &out, errp_));
  CHECK(contains(out, "\":person/age\":41"));
  mentat_free(out);
  out = NULL;
  OK(mentat_datoms(now, ":avet", "[:person/name \"Ada\"]", MENTAT_EDN, &out, errp_));
  CHECK(contains(out, ":person/name \"Ada\"") && !contains(out, "Bob"));
  mentat_free(out);
  out = NULL;
  OK(mentat_db_explain(now, "[:find ?n :where [_ :person/name ?n]]", NULL, NULL, &out, errp_));
  CHECK(out && strlen(out) > 0);
  mentat_free(out);
  out = NULL;

  /* A prepared query, run with new inputs. */
  mentat_prepared *p = NULL;
  OK(mentat_prepare(now, "[:find ?a . :in ?n :where [?e :person/name ?n] [?e :person/age ?a]]", &p,
                    errp_));
  OK(mentat_prepared_run(p, "[\"Ada\"]", NULL, MENTAT_EDN, &out, errp_));
  CHECK(out && strcmp(out, "36") == 0);
  mentat_free(out);
  out = NULL;
  OK(mentat_prepared_run(p, "[\"Bob\"]", NULL, MENTAT_EDN, &out, errp_));
  CHECK(out && strcmp(out, "41") == 0); /* `now` is before the 42 */
  mentat_free(out);
  out = NULL;
  mentat_prepared_free(p);

  /* with: the report, and nothing written. */
  OK(mentat_with(s, "[{:person/name \"Cy\"}]", MENTAT_EDN, &out, errp_));
  CHECK(contains(out, ":tx-data"));
  mentat_free(out);
  out = NULL;
  OK(mentat_q(s, "[:find ?e . :where [?e :person/name \"Cy\"]]", NULL, NULL, MENTAT_EDN, &out,
              errp_));
  CHECK(out && strcmp(out, "nil") == 0);
  mentat_free(out);
  out = NULL;

  mentat_db_free(now);
  mentat_db_free(before);
  mentat_db_free(since);
  mentat_db_free(hist);
  (void)err;
}

static void test_errors(mentat_store *s) {
  char *out = NULL, *err = NULL;
  int rc = mentat_q(s, "[:find ?x :where [?x :person/name]", NULL, NULL, MENTAT_EDN, &out, &err);
  CHECK(rc == MENTAT_PARSE);
  CHECK(contains(err, "1:")); /* line:column */
  CHECK(out == NULL);
  mentat_free(err);
  err = NULL;
  rc = mentat_transact(s, "[{:person/nme \"x\"}]", MENTAT_EDN, &out, &err);
  CHECK(rc == MENTAT_SCHEMA);
  CHECK(contains(err, "person/nme"));
  mentat_free(err);
  err = NULL;
  /* A failed transaction writes nothing: the first entity is valid, the second is not. */
  rc = mentat_transact(s, "[{:person/name \"Dee\"} {:person/age \"old\"}]", MENTAT_EDN, NULL, &err);
  CHECK(rc == MENTAT_SCHEMA);
  mentat_free(err);
  err = NULL;
  OK(mentat_q(s, "[:find ?e . :where [?e :person/name \"Dee\"]]", NULL, NULL, MENTAT_EDN, &out,
              errp_));
  CHECK(out && strcmp(out, "nil") == 0);
  mentat_free(out);
  out = NULL;
  /* NULL arguments, a bad format, bad options and inputs: errors, never crashes. */
  CHECK(mentat_q(NULL, "[:find ?x :where [?x _ _]]", NULL, NULL, 0, &out, &err) ==
        MENTAT_INVALID_ARGUMENT);
  CHECK(contains(err, "store"));
  mentat_free(err);
  err = NULL;
  CHECK(mentat_q(s, NULL, NULL, NULL, 0, &out, NULL) == MENTAT_INVALID_ARGUMENT);
  CHECK(mentat_q(s, "[:find ?x :where [?x _ _]]", NULL, NULL, 7, &out, &err) ==
        MENTAT_INVALID_ARGUMENT);
  CHECK(contains(err, "format"));
  mentat_free(err);
  err = NULL;
  CHECK(mentat_q(s, "[:find ?x :where [?x _ _]]", NULL, "{\"asOff\": 1}", 0, &out, &err) ==
        MENTAT_INVALID_ARGUMENT);
  CHECK(contains(err, "asOff"));
  mentat_free(err);
  err = NULL;
  CHECK(mentat_q(s, "[:find ?x :in ?n :where [?x :person/name ?n]]", "[\"a\" ", NULL, 0, &out,
                 &err) == MENTAT_PARSE);
  CHECK(contains(err, "inputs"));
  mentat_free(err);
  err = NULL;
  mentat_db *db = NULL;
  OK(mentat_db_current(s, &db, errp_));
  CHECK(mentat_pull(db, "[*]", "[:person/name \"Nobody\"]", MENTAT_EDN, &out, &err) != MENTAT_OK ||
        (out && strcmp(out, "nil") == 0));
  mentat_free(out);
  out = NULL;
  mentat_free(err);
  err = NULL;
  CHECK(mentat_datoms(db, ":nope", NULL, MENTAT_EDN, &out, &err) == MENTAT_INVALID_ARGUMENT);
  mentat_free(err);
  err = NULL;
  mentat_db_free(db);
  mentat_store *bad = NULL;
  CHECK(mentat_open("/nonexistent-dir/x.db", NULL, &bad, &err) != MENTAT_OK);
  CHECK(bad == NULL && err != NULL);
  mentat_free(err);
  err = NULL;
  CHECK(mentat_open("", "{\"readOnly\": 3}", &bad, &err) == MENTAT_INVALID_ARGUMENT);
  CHECK(contains(err, "readOnly"));
  mentat_free(err);
  CHECK(strcmp(mentat_code_name(MENTAT_PARSE), "parse error") == 0);
  CHECK(strcmp(mentat_code_name(99), "unknown code") == 0);
  mentat_free(NULL);
  mentat_close(NULL);
  mentat_db_free(NULL);
  mentat_prepared_free(NULL);
  mentat_listener_free(NULL);
  CHECK(mentat_db_basis_t(NULL) == -1);
  CHECK(mentat_version()[0] != '\0');
}

/* ---- Threads: readers on one store while a writer transacts ---- */

typedef struct {
  mentat_store *store;
  int errors;
  int reads;
} reader_arg;

static void *reader(void *p) {
  reader_arg *a = (reader_arg *)p;
  for (int i = 0; i < 200; i++) {
    char *out = NULL, *err = NULL;
    int rc = mentat_q(a->store, "[:find (count ?e) . :where [?e :counter/n]]", NULL, NULL,
                      MENTAT_EDN, &out, &err);
    if (rc != MENTAT_OK) {
      a->errors++;
      fprintf(stderr, "reader: %s\n", err ? err : "?");
    } else {
      long n = strcmp(out, "nil") == 0 ? 0 : atol(out);
      if (n < 0 || n > 100) a->errors++;
      a->reads++;
    }
    mentat_free(out);
    out = NULL;
    mentat_free(err);
  }
  return NULL;
}

typedef struct {
  mentat_store *store;
  int errors;
} writer_arg;

static void *writer(void *p) {
  writer_arg *a = (writer_arg *)p;
  for (int i = 0; i < 100; i++) {
    char tx[128], *err = NULL;
    snprintf(tx, sizeof tx, "[{:counter/n %d}]", i);
    if (mentat_transact(a->store, tx, MENTAT_EDN, NULL, &err) != MENTAT_OK) {
      a->errors++;
      fprintf(stderr, "writer: %s\n", err ? err : "?");
    }
    mentat_free(err);
  }
  return NULL;
}

static int listened = 0;
static pthread_mutex_t listened_mu = PTHREAD_MUTEX_INITIALIZER;
static void on_tx(void *user, const char *report) {
  (void)user;
  if (contains(report, ":counter/n")) {
    pthread_mutex_lock(&listened_mu);
    listened++;
    pthread_mutex_unlock(&listened_mu);
  }
}

static void test_threads(const char *path) {
  mentat_store *s = NULL;
  OK(mentat_open(path, "{\"busyTimeout\": 20000}", &s, errp_));
  if (!s) return;
  OK(mentat_transact(s,
                     "[{:db/ident :counter/n :db/valueType :db.type/long "
                     ":db/cardinality :db.cardinality/one}]",
                     MENTAT_EDN, NULL, errp_));
  mentat_listener *l = NULL;
  OK(mentat_listen(s, "[:counter/n]", on_tx, NULL, &l, errp_));
  enum { kReaders = 4 };
  pthread_t readers[kReaders], w;
  reader_arg ra[kReaders];
  writer_arg wa = {s, 0};
  for (int i = 0; i < kReaders; i++) {
    ra[i].store = s;
    ra[i].errors = 0;
    ra[i].reads = 0;
    pthread_create(&readers[i], NULL, reader, &ra[i]);
  }
  pthread_create(&w, NULL, writer, &wa);
  for (int i = 0; i < kReaders; i++) {
    pthread_join(readers[i], NULL);
    CHECK(ra[i].errors == 0);
    CHECK(ra[i].reads == 200);
  }
  pthread_join(w, NULL);
  CHECK(wa.errors == 0);
  char *out = NULL;
  OK(mentat_q(s, "[:find (count ?e) . :where [?e :counter/n]]", NULL, NULL, MENTAT_EDN, &out,
              errp_));
  CHECK(out && strcmp(out, "100") == 0);
  mentat_free(out);
  out = NULL;
  /* The listener saw every transaction (it runs on its own thread: wait for it). */
  for (int i = 0; i < 200; i++) {
    pthread_mutex_lock(&listened_mu);
    int n = listened;
    pthread_mutex_unlock(&listened_mu);
    if (n >= 100) break;
    usleep(20000);
  }
  mentat_listener_free(l);
  pthread_mutex_lock(&listened_mu);
  CHECK(listened == 100);
  pthread_mutex_unlock(&listened_mu);

  /* A db value keeps the store open after mentat_close. */
  mentat_db *db = NULL;
  OK(mentat_db_current(s, &db, errp_));
  mentat_interrupt(s); /* nothing running: no effect on later queries */
  mentat_close(s);
  OK(mentat_db_q(db, "[:find (count ?e) . :where [?e :counter/n]]", NULL, NULL, MENTAT_EDN, &out,
                 errp_));
  CHECK(out && strcmp(out, "100") == 0);
  mentat_free(out);
  out = NULL;
  mentat_db_free(db);

  /* Reopened from the file, the data is there. */
  OK(mentat_open(path, "{\"readOnly\": true}", &s, errp_));
  OK(mentat_q(s, "[:find (count ?e) . :where [?e :counter/n]]", NULL, NULL, MENTAT_JSON, &out,
              errp_));
  CHECK(out && strcmp(out, "100") == 0);
  mentat_free(out);
  out = NULL;
  CHECK(mentat_transact(s, "[{:counter/n 1}]", MENTAT_EDN, NULL, NULL) != MENTAT_OK);
  mentat_close(s);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  char path[4096];
  snprintf(path, sizeof path, "%s/capi_test_%ld.db", dir, (long)getpid());
  mentat_store *s = NULL;
  OK(mentat_open("", NULL, &s, errp_));
  if (s) {
    test_basics(s);
    test_errors(s);
    mentat_close(s);
  }
  test_threads(path);
  char wal[4200];
  unlink(path);
  snprintf(wal, sizeof wal, "%s-wal", path);
  unlink(wal);
  snprintf(wal, sizeof wal, "%s-shm", path);
  unlink(wal);
  if (failures) {
    fprintf(stderr, "capi_test: %d checks failed\n", failures);
    return 1;
  }
  printf("capi_test: all checks passed (mentat %s)\n", mentat_version());
  return 0;
}
