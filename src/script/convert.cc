#include "script/convert.h"

#include "script/coll.h"
#include "script/print.h"

namespace mentat::script {

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
      std::vector<Val> items;
      items.reserve(v.size());
      for (const edn::Value& x : v.items()) items.push_back(FromEdn(x));
      return ListOf(std::move(items));
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
  }
  return Val();
}

edn::Value ToEdn(const Val& v, bool strict, const char* what) {
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
      return edn::Value::String(v.str());
    case Type::kKeyword:
      return edn::Value::Keyword(v.str());
    case Type::kSymbol:
      return edn::Value::Symbol(v.str());
    case Type::kBigInt:
      return edn::Value::BigInt(v.str());
    case Type::kBigDec:
      return edn::Value::BigDec(v.str());
    case Type::kBytes:
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
      ForEach(v, [&](const Val& x) {
        items.push_back(ToEdn(x, strict, what));
        return true;
      });
      if (v.is(Type::kVector)) return edn::Value::Vector(std::move(items));
      if (v.is(Type::kSet)) return edn::Value::Set(std::move(items));
      return edn::Value::List(std::move(items));
    }
    case Type::kMap: {
      NestGuard nest;
      edn::MapEntries entries;
      ForEachEntry(v, [&](const Val& k, const Val& x) {
        entries.emplace_back(ToEdn(k, strict, what), ToEdn(x, strict, what));
        return true;
      });
      return edn::Value::Map(std::move(entries));
    }
    default:
      if (strict) {
        Fail(std::string(what) + " cannot contain a " + TypeName(v.type()) + " (" + PrStr(v) + ")");
      }
      return edn::Value::Symbol(PrStr(v));
  }
}

}  // namespace mentat::script
