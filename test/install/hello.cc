// A C++ program against the installed mentat (test/install/run.sh builds it through
// pkg-config and through find_package(mentat)).
#include <mentat/store.h>

#include <cstdio>

int main() {
  auto store = mentat::Store::open("");
  if (!store.ok()) return std::printf("open: %s\n", store.status().ToString().c_str()), 1;
  auto schema = (*store)->transact(
      R"([{:db/ident :person/name :db/valueType :db.type/string
           :db/cardinality :db.cardinality/one}])");
  if (!schema.ok()) return std::printf("schema: %s\n", schema.status().ToString().c_str()), 1;
  auto tx = (*store)->transact(R"([{:person/name "Ada"} {:person/name "Bob"}])");
  if (!tx.ok()) return std::printf("transact: %s\n", tx.status().ToString().c_str()), 1;
  auto rows = (*store)->q("[:find (count ?e) . :where [?e :person/name]]");
  if (!rows.ok()) return std::printf("q: %s\n", rows.status().ToString().c_str()), 1;
  std::printf("c++ people: %s\n", mentat::edn::Print(rows->ToEdn()).c_str());
  return 0;
}
