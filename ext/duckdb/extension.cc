// The mentat DuckDB extension: Datalog over mentat stores from DuckDB.
//
//   SET allow_unsigned_extensions = true;   -- or the config option at open
//   LOAD '/path/to/mentat.duckdb_extension';
//   SELECT edn_t('people.db', '[{:db/ident :person/name ...}]');
//   SELECT * FROM edn_q('people.db', '[:find ?e ?n :where [?e :person/name ?n]]', '{}');
//   SELECT edn_pull('people.db', '[*]', 65536);
//
// Built against DuckDB's stable C extension API (duckdb_api.h); the file name makes the
// extension's name "mentat", so DuckDB calls mentat_init_c_api below. Every callback
// catches everything: errors reach DuckDB as error messages, never as exceptions.
#include <string>

#define DUCKDB_EXTENSION_NAME mentat
#include "duckdb_api.h"

DUCKDB_EXTENSION_ENTRYPOINT(duckdb_connection connection, duckdb_extension_info info,
                            struct duckdb_extension_access* access) {
  std::string error;
  try {
    if (mentat::duckdb_ext::RegisterEdnQ(connection, &error) &&
        mentat::duckdb_ext::RegisterScalars(connection, &error)) {
      return true;
    }
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unexpected error";
  }
  access->set_error(info, ("mentat: " + error).c_str());
  return false;
}
