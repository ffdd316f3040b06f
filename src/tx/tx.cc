#include "tx/tx.h"

#include "tx/apply.h"
#include "tx/ensure.h"
#include "tx/excise.h"
#include "tx/expand.h"
#include "tx/functions.h"
#include "tx/resolve.h"
#include "tx/schema_change.h"
#include "tx/write.h"

namespace mentat::tx {

Result<TxOutput> Transact(const TxInput& in, const edn::Value& data) {
  const Schema& schema = *in.schema;
  // Calls of transaction functions first: they see the database before the transaction.
  MENTAT_ASSIGN_OR_RETURN(std::optional<edn::Value> called,
                          ExpandCalls(in.conn, schema, in.fns, data));
  MENTAT_ASSIGN_OR_RETURN(std::vector<Term> terms, Expand(schema, called ? *called : data));
  MENTAT_ASSIGN_OR_RETURN(Partitions parts, Partitions::Read(in.conn));
  Resolution res;
  if (parts.tx.next >= parts.tx.end) return Status::Conflict("partition :db.part/tx is full");
  res.tx_id = parts.tx.next++;
  MENTAT_RETURN_IF_ERROR(Resolve(in.conn, schema, &terms, &parts, &res));
  MENTAT_ASSIGN_OR_RETURN(Changes changes, Apply(in.conn, schema, terms, res));

  // The transaction's instant: explicit (never earlier than the previous one) or now.
  int64_t instant = std::max(in.now_micros, parts.last_instant);
  bool explicit_instant = false;
  for (const auto& ch : changes.asserted) {
    if (ch.a != ids::kTxInstant) continue;
    if (ch.e != res.tx_id)
      return Status::Schema(":db/txInstant can only be asserted on the current transaction");
    if (ch.v.i < parts.last_instant)
      return Status::Conflict(":db/txInstant " + edn::FormatInstant(ch.v.i) +
                              " is earlier than the previous transaction's " +
                              edn::FormatInstant(parts.last_instant));
    instant = ch.v.i;
    explicit_instant = true;
  }
  for (const auto& ch : changes.retracted) {
    if (ch.a == ids::kTxInstant)
      return Status::Schema(":db/txInstant of a transaction cannot be retracted");
  }
  if (!explicit_instant)
    changes.asserted.push_back(Change{res.tx_id, ids::kTxInstant, schema::DbVal::Int(instant), 0});

  auto ensures = TakeEnsures(&changes);
  MENTAT_ASSIGN_OR_RETURN(std::vector<Excision> excisions, FindExcisions(schema, changes));
  MENTAT_ASSIGN_OR_RETURN(std::shared_ptr<Schema> next,
                          ApplySchemaChanges(in.conn, schema, changes));
  const Schema& after = next ? *next : schema;
  MENTAT_RETURN_IF_ERROR(
      Write(in.conn, schema, after, changes, res.tx_id, instant, next != nullptr, parts));
  MENTAT_RETURN_IF_ERROR(CheckAttributePredicates(in.conn, after, changes, in.fns));
  MENTAT_RETURN_IF_ERROR(CheckEnsures(in.conn, after, ensures, in.fns));
  MENTAT_RETURN_IF_ERROR(Excise(in.conn, after, excisions));
  // An excision bumped the schema generation (every cache re-reads): publish it as one.
  if (!excisions.empty() && !next) next = std::make_shared<Schema>(schema);

  TxOutput out;
  out.new_schema = std::move(next);
  TxReport& r = out.report;
  r.tx_id = res.tx_id;
  r.tx_instant = instant;
  for (const auto& [name, id] : res.tempids)
    if (!name.empty() && name[0] != '\x01') r.tempids[name] = id;
  r.tx_data.reserve(changes.retracted.size() + changes.asserted.size());
  auto decode = [&](const Change& ch) {
    const Attribute* attr = schema.attribute(ch.a);
    if (!attr) attr = after.attribute(ch.a);
    return attr ? schema::Decode(ch.v, attr->type) : edn::Value();
  };
  for (const auto& ch : changes.retracted)
    r.tx_data.push_back(Datom{ch.e, ch.a, decode(ch), res.tx_id, false});
  for (const auto& ch : changes.asserted)
    r.tx_data.push_back(Datom{ch.e, ch.a, decode(ch), res.tx_id, true});
  return out;
}

}  // namespace mentat::tx
