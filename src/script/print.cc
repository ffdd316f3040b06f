// The printer. Scalars print exactly as edn::Print prints them; collections print with
// the same separators ("{k v, k v}", "#{a b}"); maps and sets in key order.
#include "script/print.h"

#include "script/coll.h"

namespace mentat::script {

namespace {

// Output beyond what the memory limit leaves is an error, not an allocation failure.
void CheckSize(const std::string& out) {
  Heap* h = CurrentHeap();
  if (h && h->limit() > 0 && static_cast<int64_t>(out.size()) > h->limit() - h->live()) {
    h->Exceeded();
  }
}

void PrintScalar(const edn::Value& v, std::string* out) { edn::PrintTo(v, out); }

void PrintSeqItems(const Val& coll, bool readably, std::string* out) {
  bool first = true;
  ForEach(coll, [&](const Val& x) {
    if (!first) out->push_back(' ');
    first = false;
    PrintVal(x, readably, out);
    CheckSize(*out);
    return true;
  });
}

}  // namespace

void PrintVal(const Val& v, bool readably, std::string* out) {
  switch (v.type()) {
    case Type::kNil:
      out->append("nil");
      return;
    case Type::kBool:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case Type::kInt:
      out->append(std::to_string(v.as_int()));
      return;
    case Type::kFloat:
      PrintScalar(edn::Value::Float(v.as_double()), out);
      return;
    case Type::kChar:
      if (readably) {
        PrintScalar(edn::Value::Char(v.as_char()), out);
      } else {
        AppendUtf8(v.as_char(), out);
      }
      return;
    case Type::kInst:
      PrintScalar(edn::Value::Inst(v.as_int()), out);
      return;
    case Type::kString:
      if (readably) {
        PrintScalar(edn::Value::String(v.str()), out);
      } else {
        out->append(v.str());
      }
      return;
    case Type::kKeyword:
      out->push_back(':');
      out->append(v.str());
      return;
    case Type::kSymbol:
      out->append(v.str());
      return;
    case Type::kBigInt:
      out->append(v.str()).push_back('N');
      return;
    case Type::kBigDec:
      out->append(v.str()).push_back('M');
      return;
    case Type::kBytes:
      PrintScalar(edn::Value::Bytes(v.str()), out);
      return;
    case Type::kUuid: {
      edn::Uuid u{};
      std::copy(v.str().begin(), v.str().end(), u.begin());
      PrintScalar(edn::Value::MakeUuid(u), out);
      return;
    }
    case Type::kList:
    case Type::kSeq: {
      NestGuard nest;
      out->push_back('(');
      PrintSeqItems(v, readably, out);
      out->push_back(')');
      return;
    }
    case Type::kVector: {
      NestGuard nest;
      out->push_back('[');
      PrintSeqItems(v, readably, out);
      out->push_back(']');
      return;
    }
    case Type::kSet: {
      NestGuard nest;
      out->append("#{");
      PrintSeqItems(v, readably, out);
      out->push_back('}');
      return;
    }
    case Type::kMap: {
      NestGuard nest;
      out->push_back('{');
      bool first = true;
      ForEachEntry(v, [&](const Val& k, const Val& x) {
        if (!first) out->append(", ");
        first = false;
        PrintVal(k, readably, out);
        out->push_back(' ');
        PrintVal(x, readably, out);
        CheckSize(*out);
        return true;
      });
      out->push_back('}');
      return;
    }
    case Type::kFn:
      out->append("#mentat/fn ");
      PrintScalar(edn::Value::String(v.as<FnObj>()->name), out);
      return;
    case Type::kAtom: {
      NestGuard nest;
      out->append("#mentat/atom ");
      PrintVal(v.as<AtomObj>()->value, true, out);
      return;
    }
    case Type::kError: {
      NestGuard nest;
      const ErrorObj* e = v.as<ErrorObj>();
      out->append("#error {:message ");
      PrintScalar(edn::Value::String(e->message), out);
      if (!e->data.is_nil()) {
        out->append(", :data ");
        PrintVal(e->data, true, out);
      }
      out->push_back('}');
      return;
    }
    case Type::kRegex:
    case Type::kDb:
    case Type::kConn:
      out->append(v.as<OpaqueObj>()->Describe());
      return;
  }
}

std::string PrStr(const Val& v) {
  std::string out;
  PrintVal(v, true, &out);
  return out;
}

void StrAppend(const Val& v, std::string* out) {
  switch (v.type()) {
    case Type::kNil:
      return;
    case Type::kString:
    case Type::kChar:
      PrintVal(v, false, out);
      return;
    default:
      PrintVal(v, true, out);
      return;
  }
}

}  // namespace mentat::script
