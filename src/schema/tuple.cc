#include "schema/tuple.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "schema/codec.h"
#include "util/decimal.h"

namespace mentat::schema {

namespace {

// Element tags, in the order tuples compare by (doc/format.md "Tuples").
enum Tag : uint8_t {
  kNil = 0x01,
  kFalse = 0x02,
  kTrue = 0x03,
  kInteger = 0x10,  // longs and refs: 8 bytes, big-endian, sign bit flipped
  kDouble = 0x11,   // 8 bytes, IEEE 754 bits made order-preserving
  kBigInt = 0x12,   // decimal key (util/decimal.h), escaped
  kBigDec = 0x13,
  kInstant = 0x20,  // microseconds as kInteger
  kString = 0x30,   // UTF-8, escaped: 0x00 -> 0x00 0xFF, then 0x00 0x01
  kKeyword = 0x31,  // ":ns/name"
  kSymbol = 0x32,
  kUri = 0x33,
  kUuid = 0x40,  // 16 bytes
  kBytes = 0x41,
};

void PutU64(std::string* out, uint64_t x) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
}
uint64_t GetU64(std::string_view b, size_t at) {
  uint64_t x = 0;
  for (size_t i = 0; i < 8; ++i) x = (x << 8) | static_cast<uint8_t>(b[at + i]);
  return x;
}
void PutEscaped(std::string* out, std::string_view s) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xFF');
  }
  out->push_back('\0');
  out->push_back('\x01');
}
// Reads an escaped run at `*at`; false when it is not terminated.
bool GetEscaped(std::string_view b, size_t* at, std::string* s) {
  while (*at < b.size()) {
    char c = b[(*at)++];
    if (c != '\0') {
      s->push_back(c);
      continue;
    }
    if (*at >= b.size()) return false;
    char next = b[(*at)++];
    if (next == '\x01') return true;
    if (next != '\xFF') return false;
    s->push_back('\0');
  }
  return false;
}
uint64_t DoubleBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return (u & (uint64_t{1} << 63)) ? ~u : u | (uint64_t{1} << 63);
}
double BitsDouble(uint64_t u) {
  u = (u & (uint64_t{1} << 63)) ? u & ~(uint64_t{1} << 63) : ~u;
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

// The element as the type it is expected to be (a long given for a double, an instant
// or a keyword given for a ref...), or an error naming the position.
Result<edn::Value> Coerce(const edn::Value& x, ValueType t, size_t pos, const TupleShape& shape) {
  if (x.is_nil()) return x;
  auto wrong = [&]() {
    return Status::Schema("element " + std::to_string(pos) + " of " + TupleNoun(shape) +
                          ": expected " + TypeNoun(t) + ", got " + edn::Print(x));
  };
  switch (t) {
    case ValueType::kDouble:
    case ValueType::kFloat:
      if (x.is_int()) return edn::Value::Float(static_cast<double>(x.as_int()));
      if (!x.is_float()) return wrong();
      if (t == ValueType::kFloat) return edn::Value::Float(static_cast<float>(x.as_double()));
      return x;
    case ValueType::kRef:
      // Entity ids only: idents and lookup refs are not resolved inside a tuple.
      if (!x.is_int()) return wrong();
      return x;
    case ValueType::kTuple:
      return wrong();
    default: {
      // The element must encode as the type (Encode checks kind, range and UTF-8).
      auto enc = Encode(x, t);
      if (!enc.ok()) {
        if (enc.status().code() == Code::kSchema) return wrong();
        return enc.status();
      }
      if (t == ValueType::kUri && x.is_string()) return edn::Value::Uri(x.str());
      // 1, 1N and 1.0M are the same bigint; decimals by their value.
      if (t == ValueType::kBigInt || t == ValueType::kBigDec) return Decode(*enc, t);
      return x;
    }
  }
}

Status PutElement(std::string* out, const edn::Value& x, size_t pos) {
  switch (x.kind()) {
    case edn::Kind::kNil:
      out->push_back(static_cast<char>(kNil));
      return Status::OK();
    case edn::Kind::kBool:
      out->push_back(static_cast<char>(x.as_bool() ? kTrue : kFalse));
      return Status::OK();
    case edn::Kind::kInt:
      out->push_back(static_cast<char>(kInteger));
      PutU64(out, static_cast<uint64_t>(x.as_int()) ^ (uint64_t{1} << 63));
      return Status::OK();
    case edn::Kind::kInst:
      out->push_back(static_cast<char>(kInstant));
      PutU64(out, static_cast<uint64_t>(x.as_inst_micros()) ^ (uint64_t{1} << 63));
      return Status::OK();
    case edn::Kind::kFloat:
      if (std::isnan(x.as_double()))
        return Status::InvalidArgument("NaN cannot be stored in a tuple");
      out->push_back(static_cast<char>(kDouble));
      PutU64(out, DoubleBits(x.as_double() == 0 ? 0.0 : x.as_double()));
      return Status::OK();
    case edn::Kind::kBigInt:
    case edn::Kind::kBigDec: {
      ValueType t = x.kind() == edn::Kind::kBigInt ? ValueType::kBigInt : ValueType::kBigDec;
      MENTAT_ASSIGN_OR_RETURN(DbVal key, Encode(x, t));
      out->push_back(static_cast<char>(t == ValueType::kBigInt ? kBigInt : kBigDec));
      PutEscaped(out, key.s);
      return Status::OK();
    }
    case edn::Kind::kString:
    case edn::Kind::kKeyword:
    case edn::Kind::kSymbol:
    case edn::Kind::kUri: {
      ValueType t = x.is_string()    ? ValueType::kString
                    : x.is_keyword() ? ValueType::kKeyword
                    : x.is_symbol()  ? ValueType::kSymbol
                                     : ValueType::kUri;
      MENTAT_ASSIGN_OR_RETURN(DbVal text, Encode(x, t));
      out->push_back(static_cast<char>(t == ValueType::kString    ? kString
                                       : t == ValueType::kKeyword ? kKeyword
                                       : t == ValueType::kSymbol  ? kSymbol
                                                                  : kUri));
      PutEscaped(out, text.s);
      return Status::OK();
    }
    case edn::Kind::kUuid: {
      const auto& u = x.as_uuid();
      out->push_back(static_cast<char>(kUuid));
      out->append(reinterpret_cast<const char*>(u.data()), u.size());
      return Status::OK();
    }
    case edn::Kind::kBytes:
      out->push_back(static_cast<char>(kBytes));
      PutEscaped(out, x.str());
      return Status::OK();
    default:
      return Status::Schema("element " + std::to_string(pos) +
                            " of a tuple must be a scalar value, got " + edn::Print(x));
  }
}

}  // namespace

std::optional<ValueType> ElementType(const edn::Value& x) {
  switch (x.kind()) {
    case edn::Kind::kBool:
      return ValueType::kBoolean;
    case edn::Kind::kInt:
      return ValueType::kLong;
    case edn::Kind::kFloat:
      return ValueType::kDouble;
    case edn::Kind::kBigInt:
      return ValueType::kBigInt;
    case edn::Kind::kBigDec:
      return ValueType::kBigDec;
    case edn::Kind::kString:
      return ValueType::kString;
    case edn::Kind::kKeyword:
      return ValueType::kKeyword;
    case edn::Kind::kSymbol:
      return ValueType::kSymbol;
    case edn::Kind::kUri:
      return ValueType::kUri;
    case edn::Kind::kInst:
      return ValueType::kInstant;
    case edn::Kind::kUuid:
      return ValueType::kUuid;
    case edn::Kind::kBytes:
      return ValueType::kBytes;
    default:
      return std::nullopt;
  }
}

bool IsRefElement(const Schema& schema, const Attribute& attr, size_t i) {
  if (attr.tuple_type) return *attr.tuple_type == ValueType::kRef;
  if (!attr.tuple_types.empty())
    return i < attr.tuple_types.size() && attr.tuple_types[i] == ValueType::kRef;
  if (i >= attr.tuple_attrs.size()) return false;
  const Attribute* part = schema.attribute(attr.tuple_attrs[i]);
  return part && part->type == ValueType::kRef;
}

TupleShape ShapeOf(const Attribute& attr) {
  TupleShape s;
  s.types = attr.tuple_types;
  s.of = attr.tuple_type;
  s.composite = attr.tuple_attrs.size();
  return s;
}

std::string TupleNoun(const TupleShape& shape) {
  if (shape.of) return std::string("a tuple of 2 to 8 :") + ValueTypeIdent(*shape.of) + " values";
  if (shape.composite)
    return "a tuple of " + std::to_string(shape.composite) + " values (a composite)";
  if (shape.types.empty()) return "a tuple of 2 to 8 scalar values";
  std::string out = "a tuple of (";
  for (size_t i = 0; i < shape.types.size(); ++i)
    out += std::string(i ? ", :" : ":") + ValueTypeIdent(shape.types[i]);
  return out + ")";
}

Result<std::string> EncodeTuple(const edn::Value& v, const TupleShape* shape) {
  TupleShape any;
  const TupleShape& sh = shape ? *shape : any;
  if (!v.is_vector())
    return Status::Schema("expected " + TupleNoun(sh) + " (a vector), got " +
                          edn::KindName(v.kind()) + " " + edn::Print(v));
  const edn::Vec& xs = v.items();
  size_t want = !sh.types.empty() ? sh.types.size() : sh.composite;
  if (want ? xs.size() != want : (xs.size() < kMinTupleSize || xs.size() > kMaxTupleSize))
    return Status::Schema("expected " + TupleNoun(sh) + ", got " + std::to_string(xs.size()) +
                          " elements: " + edn::Print(v));
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].is_seq() || xs[i].is_map())
      return Status::Schema("element " + std::to_string(i) +
                            " of a tuple must be a scalar value, got " + edn::Print(xs[i]));
    std::optional<ValueType> t = sh.of;
    if (!sh.types.empty()) t = sh.types[i];
    if (t) {
      MENTAT_ASSIGN_OR_RETURN(edn::Value x, Coerce(xs[i], *t, i, sh));
      MENTAT_RETURN_IF_ERROR(PutElement(&out, x, i));
    } else {
      MENTAT_RETURN_IF_ERROR(PutElement(&out, xs[i], i));
    }
  }
  return out;
}

edn::Value DecodeTuple(std::string_view b) {
  edn::Vec out;
  size_t at = 0;
  while (at < b.size()) {
    uint8_t tag = static_cast<uint8_t>(b[at++]);
    switch (tag) {
      case kNil:
        out.push_back(edn::Value());
        break;
      case kFalse:
      case kTrue:
        out.push_back(edn::Value::Bool(tag == kTrue));
        break;
      case kInteger:
      case kInstant:
      case kDouble: {
        if (at + 8 > b.size()) return edn::Value();
        uint64_t u = GetU64(b, at);
        at += 8;
        if (tag == kDouble) {
          out.push_back(edn::Value::Float(BitsDouble(u)));
        } else {
          auto i = static_cast<int64_t>(u ^ (uint64_t{1} << 63));
          out.push_back(tag == kInteger ? edn::Value::Int(i) : edn::Value::Inst(i));
        }
        break;
      }
      case kUuid: {
        if (at + 16 > b.size()) return edn::Value();
        edn::Uuid u{};
        for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(b[at + i]);
        at += 16;
        out.push_back(edn::Value::MakeUuid(u));
        break;
      }
      default: {
        std::string s;
        if (!GetEscaped(b, &at, &s)) return edn::Value();
        switch (tag) {
          case kBigInt:
            out.push_back(Decode(DbVal::Blob(s), ValueType::kBigInt));
            break;
          case kBigDec:
            out.push_back(Decode(DbVal::Blob(s), ValueType::kBigDec));
            break;
          case kString:
            out.push_back(edn::Value::String(std::move(s)));
            break;
          case kKeyword:
            out.push_back(Decode(DbVal::Text(s), ValueType::kKeyword));
            break;
          case kSymbol:
            out.push_back(edn::Value::Symbol(s));
            break;
          case kUri:
            out.push_back(edn::Value::Uri(std::move(s)));
            break;
          case kBytes:
            out.push_back(edn::Value::Bytes(std::move(s)));
            break;
          default:
            return edn::Value();
        }
      }
    }
  }
  return edn::Value::Vector(std::move(out));
}

}  // namespace mentat::schema
