#include "query/expr.h"

namespace mentat::query {

Expr Expr::Column(int item, std::string col) {
  Expr e;
  e.parts_.push_back(Part{Part::Kind::kColumn, std::move(col), item});
  return e;
}

Expr Expr::Exists(int block) {
  Expr e;
  e.parts_.push_back(Part{Part::Kind::kExists, "", block});
  return e;
}

Expr Expr::Generator(int block) {
  Expr e;
  e.parts_.push_back(Part{Part::Kind::kGenerator, "", block});
  return e;
}

bool Expr::Reads(int item, const std::string& col) const {
  for (const Part& p : parts_)
    if (p.kind == Part::Kind::kColumn && p.id == item && (col.empty() || p.text == col))
      return true;
  return false;
}

void Expr::Items(std::set<int>* out) const {
  for (const Part& p : parts_)
    if (p.kind == Part::Kind::kColumn) out->insert(p.id);
}

void Expr::Blocks(std::set<int>* out) const {
  for (const Part& p : parts_)
    if (p.kind == Part::Kind::kExists || p.kind == Part::Kind::kGenerator) out->insert(p.id);
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
  parts_.push_back(Part{Part::Kind::kText, std::move(text), -1});
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
