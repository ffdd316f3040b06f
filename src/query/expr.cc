#include "query/expr.h"

namespace mentat::query {

const char* FnName(Fn fn) {
  switch (fn) {
    case Fn::kEq:
      return "=";
    case Fn::kNe:
      return "<>";
    case Fn::kLt:
      return "<";
    case Fn::kLe:
      return "<=";
    case Fn::kGt:
      return ">";
    case Fn::kGe:
      return ">=";
    case Fn::kIsNot:
      return "is-not";
    case Fn::kAnd:
      return "and";
    case Fn::kOr:
      return "or";
    case Fn::kNot:
      return "not";
    case Fn::kIsNull:
      return "nil?";
    case Fn::kIsNotNull:
      return "some?";
    case Fn::kIn:
      return "in";
    case Fn::kAdd:
      return "+";
    case Fn::kSub:
      return "-";
    case Fn::kMul:
      return "*";
    case Fn::kDiv:
      return "quot";
    case Fn::kMod:
      return "rem";
    case Fn::kNeg:
      return "negate";
    case Fn::kConcat:
      return "concat";
    case Fn::kCastText:
      return "text";
    case Fn::kCastReal:
      return "double";
    case Fn::kBoolText:
      return "bool-text";
    case Fn::kIsInteger:
      return "integer?";
    case Fn::kIsReal:
      return "real?";
    case Fn::kAbs:
      return "abs";
    case Fn::kMax:
      return "max";
    case Fn::kMin:
      return "min";
    case Fn::kLength:
      return "length";
    case Fn::kSubstr:
      return "substr";
    case Fn::kInstr:
      return "instr";
    case Fn::kStartsWith:
      return "starts-with?";
    case Fn::kReTest:
      return "re-find?";
    case Fn::kTrim:
      return "trim";
    case Fn::kCoalesce:
      return "coalesce";
    case Fn::kStr:
      return "str";
    case Fn::kFmtInst:
      return "inst-text";
    case Fn::kFmtUuid:
      return "uuid-text";
    case Fn::kFmtDecimal:
      return "decimal-text";
    case Fn::kDecimalKey:
      return "decimal-key";
    case Fn::kReFind:
      return "re-find";
    case Fn::kReMatches:
      return "re-matches";
    case Fn::kReFindGroup:
      return "re-find-group";
    case Fn::kReMatchesGroup:
      return "re-matches-group";
    case Fn::kSubs:
      return "subs";
    case Fn::kLower:
      return "lower-case";
    case Fn::kUpper:
      return "upper-case";
    case Fn::kExactDiv:
      return "/";
    case Fn::kTuple:
      return "tuple";
    case Fn::kTupleGet:
      return "tuple-get";
    case Fn::kTupleType:
      return "tuple-type";
    case Fn::kCached:
      return "cached";
    case Fn::kEntitySet:
      return "entity-set";
    case Fn::kInEntitySet:
      return "in-entity-set";
    case Fn::kMatch:
      return "match";
    case Fn::kRank:
      return "rank";
    case Fn::kEqIntValue:
    case Fn::kEqIntValueByValue:
    case Fn::kEqIntValueByB:
      return "=";
  }
  return "?";
}

Fn CompareFn(const std::string& op) {
  if (op == "<>") return Fn::kNe;
  if (op == "<") return Fn::kLt;
  if (op == "<=") return Fn::kLe;
  if (op == ">") return Fn::kGt;
  if (op == ">=") return Fn::kGe;
  return Fn::kEq;
}

Expr Expr::Call(Fn fn, std::vector<Expr> args) {
  Expr e;
  Part p;
  p.kind = Part::Kind::kCall;
  p.fn = fn;
  p.args = std::move(args);
  e.parts_.push_back(std::move(p));
  return e;
}

Expr Expr::Column(int item, std::string col) {
  Expr e;
  e.parts_.push_back(Part{Part::Kind::kColumn, std::move(col), item, Fn::kEq, {}});
  return e;
}

Expr Expr::Exists(int block) {
  Expr e;
  e.parts_.push_back(Part{Part::Kind::kExists, "", block, Fn::kEq, {}});
  return e;
}

Expr Expr::Generator(int block) {
  Expr e;
  e.parts_.push_back(Part{Part::Kind::kGenerator, "", block, Fn::kEq, {}});
  return e;
}

bool Expr::Reads(int item, const std::string& col) const {
  for (const Part& p : parts_) {
    if (p.kind == Part::Kind::kColumn && p.id == item && (col.empty() || p.text == col))
      return true;
    for (const Expr& a : p.args)
      if (a.Reads(item, col)) return true;
  }
  return false;
}

void Expr::Items(std::set<int>* out) const {
  for (const Part& p : parts_) {
    if (p.kind == Part::Kind::kColumn) out->insert(p.id);
    for (const Expr& a : p.args) a.Items(out);
  }
}

void Expr::Blocks(std::set<int>* out) const {
  for (const Part& p : parts_) {
    if (p.kind == Part::Kind::kExists || p.kind == Part::Kind::kGenerator) out->insert(p.id);
    for (const Expr& a : p.args) a.Blocks(out);
  }
}

std::string Expr::DebugString() const {
  std::string out;
  for (const Part& p : parts_) {
    switch (p.kind) {
      case Part::Kind::kText:
        out += p.text;
        break;
      case Part::Kind::kColumn:
        out += "t" + std::to_string(p.id) + "." + p.text;
        break;
      case Part::Kind::kExists:
        out += "EXISTS(b" + std::to_string(p.id) + ")";
        break;
      case Part::Kind::kGenerator:
        out += "GENERATOR(b" + std::to_string(p.id) + ")";
        break;
      case Part::Kind::kCall:
        out += std::string(FnName(p.fn)) + "(";
        for (size_t i = 0; i < p.args.size(); ++i) out += (i ? ", " : "") + p.args[i].DebugString();
        out += ")";
        break;
    }
  }
  return out;
}

void Expr::Append(std::string text) {
  if (text.empty()) return;
  if (!parts_.empty() && parts_.back().kind == Part::Kind::kText) {
    parts_.back().text += text;
    return;
  }
  parts_.push_back(Part{Part::Kind::kText, std::move(text), -1, Fn::kEq, {}});
}

Expr& Expr::operator+=(const Expr& o) {
  if (&o == this) {
    Expr copy = o;
    return *this += copy;
  }
  for (const Part& p : o.parts_) {
    if (p.kind == Part::Kind::kText) {
      Append(p.text);
    } else {
      parts_.push_back(p);
    }
  }
  return *this;
}

}  // namespace mentat::query
