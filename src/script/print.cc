// The printer. Scalars print exactly as edn::Print prints them; collections print with
// the same separators ("{k v, k v}", "#{a b}"); maps and sets in key order. The output
// is a TextBuf: it is charged to the heap as it grows and to the meter per byte, and
// ForEach charges a step per element, so printing a (range) stops at a limit.
#include "script/print.h"

#include "script/coll.h"

namespace mentat::script {

namespace {

// `room`: the bytes it likely needs (more is charged after the fact).
void PrintScalar(const edn::Value& v, size_t room, TextBuf* out) {
  out->Reserve(room);
  out->AppendWith([&](std::string* s) { edn::PrintTo(v, s); });
}

void PrintSeqItems(const Val& coll, bool readably, TextBuf* out) {
  bool first = true;
  ForEach(coll, [&](const Val& x) {
    if (!first) out->Push(' ');
    first = false;
    PrintVal(x, readably, out);
    return !out->full();
  });
}

// The first bytes of `s` that fit in what `out` may still take, cut at a character.
std::string_view Fitting(std::string_view s, const TextBuf& out) {
  size_t n = out.Room(s.size());
  if (n == s.size()) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace

void PrintVal(const Val& v, bool readably, TextBuf* out) {
  if (out->full()) return;
  switch (v.type()) {
    case Type::kNil:
      out->Append("nil");
      return;
    case Type::kBool:
      out->Append(v.as_bool() ? "true" : "false");
      return;
    case Type::kInt:
      out->Append(std::to_string(v.as_int()));
      return;
    case Type::kFloat:
      PrintScalar(edn::Value::Float(v.as_double()), 32, out);
      return;
    case Type::kChar:
      if (readably) {
        PrintScalar(edn::Value::Char(v.as_char()), 16, out);
      } else {
        std::string utf8;
        AppendUtf8(v.as_char(), &utf8);
        out->Append(utf8);
      }
      return;
    case Type::kInst:
      PrintScalar(edn::Value::Inst(v.as_int()), 40, out);
      return;
    case Type::kString:
      if (readably) {
        std::string_view text = Fitting(v.str(), *out);
        PrintScalar(edn::Value::String(std::string(text)), text.size() + 2, out);
      } else {
        out->Append(v.str());
      }
      return;
    case Type::kKeyword:
      out->Push(':');
      out->Append(v.str());
      return;
    case Type::kSymbol:
      out->Append(v.str());
      return;
    case Type::kBigInt:
      out->Append(v.str());
      out->Push('N');
      return;
    case Type::kBigDec:
      out->Append(v.str());
      out->Push('M');
      return;
    case Type::kBytes:
      PrintScalar(edn::Value::Bytes(v.str()), v.str().size() * 4 / 3 + 16, out);
      return;
    case Type::kUuid: {
      edn::Uuid u{};
      std::copy(v.str().begin(), v.str().end(), u.begin());
      PrintScalar(edn::Value::MakeUuid(u), 48, out);
      return;
    }
    case Type::kList:
    case Type::kSeq: {
      NestGuard nest;
      out->Push('(');
      PrintSeqItems(v, readably, out);
      out->Push(')');
      return;
    }
    case Type::kVector: {
      NestGuard nest;
      out->Push('[');
      PrintSeqItems(v, readably, out);
      out->Push(']');
      return;
    }
    case Type::kSet: {
      NestGuard nest;
      out->Append("#{");
      PrintSeqItems(v, readably, out);
      out->Push('}');
      return;
    }
    case Type::kMap: {
      NestGuard nest;
      out->Push('{');
      bool first = true;
      ForEachEntry(v, [&](const Val& k, const Val& x) {
        if (!first) out->Append(", ");
        first = false;
        PrintVal(k, readably, out);
        out->Push(' ');
        PrintVal(x, readably, out);
        return !out->full();
      });
      out->Push('}');
      return;
    }
    case Type::kFn:
      out->Append("#mentat/fn ");
      PrintScalar(edn::Value::String(v.as<FnObj>()->name), v.as<FnObj>()->name.size() + 2, out);
      return;
    case Type::kAtom: {
      NestGuard nest;
      out->Append("#mentat/atom ");
      PrintVal(v.as<AtomObj>()->value, true, out);
      return;
    }
    case Type::kError: {
      NestGuard nest;
      const ErrorObj* e = v.as<ErrorObj>();
      out->Append("#error {:message ");
      PrintScalar(edn::Value::String(e->message), e->message.size() + 2, out);
      if (!e->data.is_nil()) {
        out->Append(", :data ");
        PrintVal(e->data, true, out);
      }
      out->Push('}');
      return;
    }
    case Type::kRegex:
    case Type::kDb:
    case Type::kConn:
      out->Append(v.as<OpaqueObj>()->Describe());
      return;
  }
}

std::string PrStr(const Val& v) {
  TextBuf out;
  PrintVal(v, true, &out);
  return out.Take();
}

std::string PrBrief(const Val& v) {
  TextBuf out;
  out.set_cap(kBriefBytes);
  PrintVal(v, true, &out);
  std::string text = out.Take();
  if (text.size() > kBriefBytes) {
    size_t n = kBriefBytes;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    text.resize(n);
    text += "...";
  }
  return text;
}

void StrAppend(const Val& v, TextBuf* out) {
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
