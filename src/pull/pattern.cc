// Pull pattern parsing: Datomic's grammar, validated against the schema.
//
//   pattern        = [attr-spec+]
//   attr-spec      = attr-name | wildcard | map-spec | attr-with-opts | attr-expr
//   map-spec       = { ((attr-name | attr-with-opts | attr-expr) (pattern | recursion-limit))+ }
//   attr-with-opts = [attr-name attr-option+]
//   attr-option    = :as any-value | :limit (positive-number | nil) | :default any-value
//   wildcard       = "*" or '*'
//   recursion-limit = positive-number | '...'
//   attr-expr      = [("limit" | 'limit') attr-name (positive-number | nil)]
//                  | [("default" | 'default') attr-name any-value]
#include <algorithm>
#include <optional>

#include "pull/pull.h"

namespace mentat::pull {

namespace {

constexpr int64_t kDefaultLimit = 1000;

Status Err(Code code, const edn::Value& at, const std::string& msg) {
  edn::Pos p = at.pos();
  if (!p.known()) return Status(code, msg);
  return Status(code, std::to_string(p.line) + ":" + std::to_string(p.col) + ": " + msg);
}

bool IsWord(const edn::Value& v, std::string_view word) {
  return (v.is_symbol() && v.str() == word) || (v.is_string() && v.str() == word);
}

// A spec under construction: the attribute, or :db/id.
struct Named {
  bool db_id = false;
  AttrSpec spec;
};

class Parser {
 public:
  explicit Parser(const Schema& schema) : schema_(schema) {}

  Result<std::shared_ptr<const Pattern>> ParsePattern(const edn::Value& v) {
    if (!(v.is_vector() || v.is_list()))
      return Err(Code::kParse, v,
                 "a pull pattern must be a vector of attribute specs, got " + edn::Print(v));
    if (v.items().empty()) return Err(Code::kParse, v, "a pull pattern must not be empty: []");
    auto p = std::make_shared<Pattern>();
    for (const auto& item : v.items()) MENTAT_RETURN_IF_ERROR(ParseSpec(item, p.get()));
    for (const auto& s : p->specs) {
      auto& list = s.dir == AttrSpec::Dir::kForward ? p->forward_attrs : p->reverse_attrs;
      list.push_back(s.a);
    }
    for (const auto& s : p->specs)
      if (s.recursion != 0 || s.expand || (s.sub && !s.sub->path_independent))
        p->path_independent = false;
    if (p->wildcard && HasComponents()) p->path_independent = false;
    for (auto* list : {&p->forward_attrs, &p->reverse_attrs}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    return std::shared_ptr<const Pattern>(std::move(p));
  }

 private:
  Status ParseSpec(const edn::Value& item, Pattern* p) {
    if (IsWord(item, "*")) {
      p->wildcard = true;
      if (!p->db_id_key) p->db_id_key = edn::Value::Keyword("db/id");
      return Status::OK();
    }
    if (item.is_keyword() || item.is_vector() || item.is_list()) {
      MENTAT_ASSIGN_OR_RETURN(Named n, ParseAttrExpr(item));
      Add(std::move(n), p);
      return Status::OK();
    }
    if (item.is_map()) {
      if (item.entries().empty())
        return Err(Code::kParse, item, "an empty map spec {} in a pull pattern");
      for (const auto& [k, val] : item.entries()) {
        if (!(k.is_keyword() || k.is_vector() || k.is_list()))
          return Err(
              Code::kParse, k,
              "a map spec key must be an attribute name or [attr options], got " + edn::Print(k));
        MENTAT_ASSIGN_OR_RETURN(Named n, ParseAttrExpr(k));
        if (n.db_id) return Err(Code::kParse, k, ":db/id cannot take a nested pattern");
        AttrSpec& s = n.spec;
        bool is_ref = s.dir == AttrSpec::Dir::kReverse || s.type == ValueType::kRef;
        std::string part = "{" + edn::Print(k) + " " + edn::Print(val) + "}";
        if (!is_ref)
          return Err(Code::kSchema, k,
                     edn::Print(k) +
                         " is not a ref attribute, so it cannot take a nested "
                         "pattern or recursion: " +
                         part);
        if (val.is_vector() || val.is_list()) {
          MENTAT_ASSIGN_OR_RETURN(s.sub, ParsePattern(val));
        } else if (val.is_int()) {
          if (val.as_int() <= 0)
            return Err(Code::kParse, val,
                       "a recursion limit must be a positive number or ..., got " + part);
          s.recursion = val.as_int();
        } else if (IsWord(val, "...")) {
          s.recursion = -1;
        } else {
          return Err(Code::kParse, val,
                     "a map spec value must be a pattern, a positive number or ..., got " + part);
        }
        s.expand = false;
        Add(std::move(n), p);
      }
      return Status::OK();
    }
    return Err(Code::kParse, item,
               "invalid attribute spec " + edn::Print(item) +
                   " in a pull pattern (expected a keyword, *, a map or [attr options])");
  }

  bool HasComponents() {
    if (!has_components_) {
      has_components_ = false;
      for (const auto& [id, attr] : schema_.attributes())
        if (attr.component && attr.type == ValueType::kRef) has_components_ = true;
    }
    return *has_components_;
  }

  static void Add(Named n, Pattern* p) {
    if (n.db_id) {
      p->db_id_key = n.spec.key;
      return;
    }
    p->specs.push_back(std::move(n.spec));
  }

  // A keyword, [attr :opt v ...], or a legacy (limit :attr n) / (default :attr v).
  Result<Named> ParseAttrExpr(const edn::Value& v) {
    if (v.is_keyword()) return ResolveName(v);
    const edn::Vec& xs = v.items();
    if (xs.empty()) return Err(Code::kParse, v, "an empty attribute expression " + edn::Print(v));
    const edn::Value& head = xs[0];
    if (IsWord(head, "limit") || IsWord(head, "default")) {
      bool limit = IsWord(head, "limit");
      if (xs.size() != 3 || !xs[1].is_keyword())
        return Err(Code::kParse, v,
                   std::string("expected (") + (limit ? "limit :attr n" : "default :attr value") +
                       "), got " + edn::Print(v));
      MENTAT_ASSIGN_OR_RETURN(Named n, ResolveName(xs[1]));
      MENTAT_RETURN_IF_ERROR(ApplyOption(v, limit ? ":limit" : ":default", xs[2], &n));
      return n;
    }
    if (!head.is_keyword())
      return Err(Code::kParse, v,
                 "expected [attr options] with an attribute name first, got " + edn::Print(v));
    MENTAT_ASSIGN_OR_RETURN(Named n, ResolveName(head));
    if (xs.size() < 3 || xs.size() % 2 == 0)
      return Err(Code::kParse, v,
                 "expected [attr :option value ...] with options :as, :limit or :default, got " +
                     edn::Print(v));
    for (size_t i = 1; i + 1 < xs.size(); i += 2) {
      if (!xs[i].is_keyword())
        return Err(Code::kParse, xs[i],
                   "expected an option :as, :limit or :default, got " + edn::Print(xs[i]) + " in " +
                       edn::Print(v));
      MENTAT_RETURN_IF_ERROR(ApplyOption(v, ":" + xs[i].str(), xs[i + 1], &n));
    }
    return n;
  }

  Status ApplyOption(const edn::Value& expr, const std::string& opt, const edn::Value& val,
                     Named* n) {
    if (opt == ":as") {
      n->spec.key = val;
      return Status::OK();
    }
    if (n->db_id)
      return Err(Code::kParse, expr, ":db/id takes only the :as option, got " + edn::Print(expr));
    if (opt == ":limit") {
      if (val.is_nil()) {
        n->spec.limit.reset();
      } else if (val.is_int() && val.as_int() > 0) {
        n->spec.limit = val.as_int();
      } else {
        return Err(Code::kParse, val,
                   "a :limit must be a positive number or nil, got " + edn::Print(val) + " in " +
                       edn::Print(expr));
      }
      return Status::OK();
    }
    if (opt == ":default") {
      n->spec.default_value = val;
      return Status::OK();
    }
    return Err(Code::kParse, expr,
               "unknown attribute option " + opt + " in " + edn::Print(expr) +
                   " (expected :as, :limit or :default)");
  }

  // An attribute name: :db/id, :ns/attr, or the reverse :ns/_attr.
  Result<Named> ResolveName(const edn::Value& kw) {
    if (!kw.is_keyword())
      return Err(Code::kParse, kw, "expected an attribute name, got " + edn::Print(kw));
    Named n;
    n.spec.key = kw;
    const std::string& ident = kw.str();
    if (ident == "db/id") {
      n.db_id = true;
      return n;
    }
    AttrSpec& s = n.spec;
    if (const Attribute* attr = schema_.attribute(ident)) {
      s.dir = AttrSpec::Dir::kForward;
      s.a = attr->id;
      s.type = attr->type;
      s.many = attr->many;
      s.component = attr->component && attr->type == ValueType::kRef;
      s.expand = s.component;
      if (s.many) s.limit = kDefaultLimit;
      return n;
    }
    std::string_view ns = kw.ns(), name = kw.name();
    if (!name.empty() && name[0] == '_') {
      std::string fwd = ns.empty() ? std::string(name.substr(1))
                                   : std::string(ns) + "/" + std::string(name.substr(1));
      if (const Attribute* attr = schema_.attribute(fwd)) {
        if (attr->type != ValueType::kRef)
          return Err(Code::kSchema, kw,
                     "reverse attribute " + edn::Print(kw) + " needs a ref attribute, but :" + fwd +
                         " is " + ValueTypeIdent(attr->type));
        s.dir = AttrSpec::Dir::kReverse;
        s.a = attr->id;
        s.type = ValueType::kRef;
        s.component = attr->component;
        s.many = !attr->component;
        if (s.many) s.limit = kDefaultLimit;
        return n;
      }
    }
    return Err(Code::kSchema, kw, "unknown attribute " + edn::Print(kw) + " in pull pattern");
  }

  const Schema& schema_;
  std::optional<bool> has_components_;
};

}  // namespace

Result<std::shared_ptr<const Pattern>> ParsePattern(const Schema& schema,
                                                    const edn::Value& pattern) {
  return Parser(schema).ParsePattern(pattern);
}

}  // namespace mentat::pull
