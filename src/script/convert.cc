// Conversions between edn::Value and Val.
#include "script/convert.h"

#include <algorithm>

#include "script/coll.h"
#include "script/print.h"

namespace mentat::script {

namespace {

constexpr int64_t kEdnNode = static_cast<int64_t>(sizeof(edn::Value));

edn::Value ToEdnIn(const Val& v, bool strict, const char* what, ScopedCharge& charge);

// The bytes of a string-backed edn value beyond its node (which its parent charged).
int64_t TextCost(const Val& v) {
  CurrentMeter().Text(v.str().size());
  return static_cast<int64_t>(v.str().size());
}

// Reserves the nodes of a collection's items up front (so a (range) too large to fit
// fails before it is walked).
template <typename Items>
void ReserveItems(const Val& v, int64_t node_bytes, ScopedCharge& charge, Items* items) {
  size_t n = Count(v);
  Heap* h = CurrentHeap();
  if (h && h->limit() > 0 &&
      static_cast<double>(n) * node_bytes > static_cast<double>(h->limit() - h->live())) {
    h->Exceeded();
  }
  charge.Add(static_cast<int64_t>(n) * node_bytes);
  constexpr size_t kMaxReserve = size_t{1} << 16;  // without a limit, grow past this
  items->reserve(std::min(n, kMaxReserve));
}

}  // namespace

Val FromEdn(const edn::Value& v) {
  switch (v.kind()) {
    case edn::Kind::kNil:
      return Val();
    case edn::Kind::kBool:
      return Val::Bool(v.as_bool());
    case edn::Kind::kInt:
      return Val::Int(v.as_int());
    case edn::Kind::kBigInt:
      return Val::Text(Type::kBigInt, v.str());
    case edn::Kind::kFloat:
      return Val::Float(v.as_double());
    case edn::Kind::kBigDec:
      return Val::Text(Type::kBigDec, v.str());
    case edn::Kind::kChar:
      return Val::Char(v.as_char());
    case edn::Kind::kString:
      return Val::String(v.str());
    case edn::Kind::kKeyword:
      return Val::Keyword(v.str());
    case edn::Kind::kSymbol:
      return Val::Symbol(v.str());
    case edn::Kind::kList: {
      NestGuard nest;
      ListBuilder items;
      for (const edn::Value& x : v.items()) items.Add(FromEdn(x));
      return items.Build();
    }
    case edn::Kind::kVector: {
      NestGuard nest;
      VecBuilder b;
      for (const edn::Value& x : v.items()) b.Add(FromEdn(x));
      return b.Build();
    }
    case edn::Kind::kSet: {
      NestGuard nest;
      MapBuilder b(true);
      for (const edn::Value& x : v.items()) b.Add(FromEdn(x));
      return b.Build();
    }
    case edn::Kind::kMap: {
      NestGuard nest;
      MapBuilder b;
      for (const auto& [k, x] : v.entries()) b.Add(FromEdn(k), FromEdn(x));
      return b.Build();
    }
    case edn::Kind::kInst:
      return Val::Inst(v.as_inst_micros());
    case edn::Kind::kUuid: {
      const edn::Uuid& u = v.as_uuid();
      return Val::Text(Type::kUuid, std::string(u.begin(), u.end()));
    }
    case edn::Kind::kBytes:
      return Val::Text(Type::kBytes, v.str());
    case edn::Kind::kUri:  // scripts see a uri as its text (a uri attribute takes strings)
      return Val::String(v.str());
  }
  return Val();
}

edn::Value ToEdn(const Val& v, bool strict, const char* what, ScopedCharge* charge) {
  ScopedCharge local;
  ScopedCharge& c = charge ? *charge : local;
  c.Add(kEdnNode);
  return ToEdnIn(v, strict, what, c);
}

Result<edn::Value> ReadCharged(std::string_view text, const edn::ReadOptions& options,
                               ScopedCharge* charge) {
  CurrentMeter().Text(text.size());
  charge->Add(static_cast<int64_t>(text.size()) +
              kEdnNode * static_cast<int64_t>(text.size() / 2 + 1));
  return edn::Read(text, options);
}

namespace {

// `v`'s own node is already charged.
edn::Value ToEdnIn(const Val& v, bool strict, const char* what, ScopedCharge& charge) {
  switch (v.type()) {
    case Type::kNil:
      return edn::Value();
    case Type::kBool:
      return edn::Value::Bool(v.as_bool());
    case Type::kInt:
      return edn::Value::Int(v.as_int());
    case Type::kFloat:
      return edn::Value::Float(v.as_double());
    case Type::kChar:
      return edn::Value::Char(v.as_char());
    case Type::kInst:
      return edn::Value::Inst(v.as_int());
    case Type::kString:
      charge.Add(TextCost(v));
      return edn::Value::String(v.str());
    case Type::kKeyword:
      charge.Add(TextCost(v));
      return edn::Value::Keyword(v.str());
    case Type::kSymbol:
      charge.Add(TextCost(v));
      return edn::Value::Symbol(v.str());
    case Type::kBigInt:
      charge.Add(TextCost(v));
      return edn::Value::BigInt(v.str());
    case Type::kBigDec:
      charge.Add(TextCost(v));
      return edn::Value::BigDec(v.str());
    case Type::kBytes:
      charge.Add(TextCost(v));
      return edn::Value::Bytes(v.str());
    case Type::kUuid: {
      edn::Uuid u{};
      std::copy(v.str().begin(), v.str().end(), u.begin());
      return edn::Value::MakeUuid(u);
    }
    case Type::kList:
    case Type::kSeq:
    case Type::kVector:
    case Type::kSet: {
      NestGuard nest;
      edn::Vec items;
      ReserveItems(v, kEdnNode, charge, &items);
      ForEach(v, [&](const Val& x) {
        items.push_back(ToEdnIn(x, strict, what, charge));
        return true;
      });
      if (v.is(Type::kVector)) return edn::Value::Vector(std::move(items));
      if (v.is(Type::kSet)) return edn::Value::Set(std::move(items));
      return edn::Value::List(std::move(items));
    }
    case Type::kMap: {
      NestGuard nest;
      edn::MapEntries entries;
      ReserveItems(v, 2 * kEdnNode, charge, &entries);
      ForEachEntry(v, [&](const Val& k, const Val& x) {
        entries.emplace_back(ToEdnIn(k, strict, what, charge), ToEdnIn(x, strict, what, charge));
        return true;
      });
      return edn::Value::Map(std::move(entries));
    }
    default:
      if (strict) {
        Fail(std::string(what) + " cannot contain a " + TypeName(v.type()) + " (" + PrBrief(v) +
             ")");
      }
      std::string printed = PrStr(v);
      charge.Add(static_cast<int64_t>(printed.size()));
      return edn::Value::Symbol(std::move(printed));
  }
}

}  // namespace

}  // namespace mentat::script
