/* A C program against the installed mentat (test/install/run.sh). */
#include <mentat/mentat.h>
#include <stdio.h>

int main(void) {
  mentat_store *s;
  char *out = NULL, *err = NULL;
  if (mentat_open("", NULL, &s, &err) != MENTAT_OK) return printf("open: %s\n", err), 1;
  if (mentat_transact(s,
                      "[{:db/ident :person/name :db/valueType :db.type/string"
                      "  :db/cardinality :db.cardinality/one}]",
                      MENTAT_EDN, NULL, &err) != MENTAT_OK ||
      mentat_transact(s, "[{:person/name \"Ada\"} {:person/name \"Bob\"}]", MENTAT_EDN, NULL,
                      &err) != MENTAT_OK)
    return printf("transact: %s\n", err), 1;
  if (mentat_q(s, "[:find [?n ...] :where [_ :person/name ?n]]", NULL, NULL, MENTAT_JSON, &out,
               &err) != MENTAT_OK)
    return printf("q: %s\n", err), 1;
  printf("c people: %s\n", out);
  mentat_free(out);
  mentat_close(s);
  return 0;
}
