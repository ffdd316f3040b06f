#include "query/dialect.h"

#include "storage/format.h"

namespace mentat::query {

namespace {

class Sqlite : public Dialect {
 public:
  const char* name() const override { return "sqlite"; }
  std::string IndexTest(bool value_indexed) const override {
    return storage::IndexTest(value_indexed);
  }
  Expr EqValue(const Expr& v, const Expr& x) const override {
    // `v` has no affinity; comparing it with an INTEGER (or TEXT) column applies that
    // affinity to v, which keeps SQLite from using an index on v. The second,
    // affinity-free form (+x) lets the index on v drive the lookup; together they keep
    // exact typing.
    return "(" + v + " = " + x + " AND " + v + " = +" + x + ")";
  }
  Expr NoAffinity(const Expr& x) const override { return "+(" + x + ")"; }
  const char* PinnedJoin() const override { return " CROSS JOIN "; }
  std::string IndexHint(const std::string& index) const override { return "INDEXED BY " + index; }
  std::string RelationTable(const std::string& param) const override {
    return "mentat_rel(" + param + ")";
  }
};

}  // namespace

const Dialect& SqliteDialect() {
  static const Sqlite kSqlite;
  return kSqlite;
}

}  // namespace mentat::query
