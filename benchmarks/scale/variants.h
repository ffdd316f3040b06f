// The `variants` scenario family (SCALE_SUITE.md "Beyond the eight"): realistic queries
// outside the eight — or, or-join, rules, recursion over the generator's graph, joins of
// many patterns, not, aggregates over joins, string functions, get-else/get-some/missing?,
// nested pull, as-of/since/history and two sources — each with hand-written SQL over
// mentat's own tables (doc/format.md) that computes the same answer.
//
// A variant is data: the EDN query (with its rule set and database view), the SQL, the
// types of the SQL's columns, how to draw the inputs of a timed call, the fixed inputs of
// its checks and, where the generator knows it, the number of rows meta.json says the
// answer has. The same input values bind mentat's `:in` variables (after `$`, and after
// the second source and `%` when the variant has them) and the SQL's ?1..?n.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rng.h"
#include "scale.h"

namespace mentat::scale {

// The database the query's `$` reads.
enum class VariantView { kCurrent, kAsOfMid, kHistory };
// A second source, passed as the first input after `$` (`:in $ $old ...`).
enum class SecondSource { kNone, kAsOfMid, kSinceT };

struct VariantArgs {
  std::vector<edn::Value> values;  // positional: mentat's inputs and the SQL's ?1..?n
  std::string probe;               // the meta.json graph probe they name, "" for none
  std::string label;               // how a check line names them ("user 0", "issue 6500")
};

struct Variant {
  std::string name{};  // the scenario is "variant/<name>"
  std::string what{};  // one line: what it asks (README's table)
  std::string query{};
  std::string rules{};  // a rule set passed as the `%` input; "" for none
  VariantView view = VariantView::kCurrent;
  SecondSource source2 = SecondSource::kNone;
  // SQL over doc/format.md's tables. "{ns/name}" is replaced by the attribute's entity id,
  // "{t_mid}" and "{t_since}" by the named points' tx ids.
  std::string sql{};
  // One letter per SQL column: i long/ref, s string, k keyword, d double, t instant,
  // b boolean. SQL NULL is nil.
  std::string cols{};
  std::function<VariantArgs(const Context&, Rng&)> args{};               // a timed call's inputs
  std::function<std::vector<VariantArgs>(const Context&)> check_args{};  // the checks' inputs
  // The number of rows of the answer for `a`, when meta.json's truth knows it.
  std::function<std::optional<int64_t>(const Context&, const VariantArgs& a)> truth_rows{};
  // Maps mentat's rows to the SQL's row shape before comparing (nested pull); null: as is.
  std::function<Row(const Row&)> normalize{};
};

// Every variant, in a fixed order; names are unique.
const std::vector<Variant>& Variants();
// The variant named `name` (with or without the "variant/" prefix), or null.
const Variant* FindVariant(std::string_view name);
inline constexpr std::string_view kVariantPrefix = "variant/";

// The SQL of `v` (or `sql`, another text of it) with its tokens replaced: `attr` maps
// "ns/name" to an attribute id.
Result<std::string> VariantSql(
    const Variant& v, const Context& ctx,
    const std::function<std::optional<int64_t>(const std::string&)>& attr,
    const std::string* sql = nullptr);

// The hand-written PostgreSQL text of the variant named `name` (variants_pg.cc: the same
// answer over doc/format.md's PostgreSQL tables, $1..$n for the inputs), or null.
const std::string* PgVariantSql(std::string_view name);

// A row's canonical text for comparing answers as sets of rows: values printed as EDN,
// doubles to 9 significant digits (avg computed two ways may differ in its last bits).
std::string CanonicalRow(const Row& row);

}  // namespace mentat::scale
