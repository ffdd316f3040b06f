// Destructuring of binding forms, as in Clojure's let, fn and loop:
//   [a b & more :as all]   positional (nth), rest (nthnext), whole
//   {:keys [a b] :strs [c] :syms [d] :or {a 1} :as m, x :x}
#include "script/analyze.h"

namespace mentat::script {

namespace {

edn::Value Core(const std::string& name) { return edn::Value::Symbol("clojure.core/" + name); }

edn::Value List(edn::Vec items, edn::Pos pos) {
  edn::Value v = edn::Value::List(std::move(items));
  v.set_pos(pos);
  return v;
}

void Bind(const edn::Value& sym, const edn::Value& init, edn::Vec* out) {
  out->push_back(sym);
  out->push_back(init);
}

void DestructureVector(const edn::Value& pattern, const edn::Value& init, edn::Vec* out) {
  edn::Pos pos = pattern.pos();
  edn::Value g = Analyzer::Gensym("vec");
  Bind(g, init, out);
  const edn::Vec& items = pattern.items();
  int64_t index = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const edn::Value& item = items[i];
    if (item.is_symbol("&")) {
      if (i + 1 >= items.size()) SyntaxError(item.pos(), "& must be followed by a binding form");
      Destructure(items[i + 1], List({Core("nthnext"), g, edn::Value::Int(index)}, pos), out);
      ++i;
      continue;
    }
    if (item.is_keyword("as")) {
      if (i + 1 >= items.size() || !IsLocalName(items[i + 1])) {
        SyntaxError(item.pos(), ":as must be followed by a symbol");
      }
      Bind(items[i + 1], g, out);
      ++i;
      continue;
    }
    Destructure(item, List({Core("nth"), g, edn::Value::Int(index), edn::Value()}, pos), out);
    ++index;
  }
}

void DestructureMap(const edn::Value& pattern, const edn::Value& init, edn::Vec* out) {
  edn::Pos pos = pattern.pos();
  edn::Value g = Analyzer::Gensym("map");
  Bind(g, init, out);
  // A sequence of key/value arguments destructures as a map, as in Clojure.
  Bind(g,
       List({edn::Value::Symbol("if"), List({Core("seq?"), g}, pos),
             List({Core("apply"), Core("hash-map"), g}, pos), g},
            pos),
       out);
  const edn::Value* defaults = pattern.get_keyword("or");
  if (defaults && !defaults->is_map()) SyntaxError(defaults->pos(), ":or needs a map");
  auto default_for = [&](const edn::Value& sym) -> const edn::Value* {
    return defaults ? defaults->get(sym) : nullptr;
  };
  auto get = [&](const edn::Value& key, const edn::Value* dflt) {
    edn::Vec call{Core("get"), g, key};
    if (dflt) call.push_back(*dflt);
    return List(std::move(call), pos);
  };
  for (const auto& [k, v] : pattern.entries()) {
    if (k.is_keyword("keys") || k.is_keyword("strs") || k.is_keyword("syms")) {
      if (!v.is_vector()) SyntaxError(v.pos(), ":" + k.str() + " needs a vector of symbols");
      for (const edn::Value& name : v.items()) {
        if (!name.is_symbol() && !name.is_keyword()) {
          SyntaxError(name.pos(), ":" + k.str() + " needs symbols, got " + Print(name));
        }
        edn::Value local = edn::Value::Symbol(name.name());
        edn::Value key;
        if (k.is_keyword("keys")) {
          key = edn::Value::Keyword(name.str());
        } else if (k.is_keyword("strs")) {
          key = edn::Value::String(std::string(name.name()));
        } else {
          key = List({edn::Value::Symbol("quote"), edn::Value::Symbol(name.str())}, pos);
        }
        Bind(local, get(key, default_for(local)), out);
      }
    } else if (k.is_keyword("as")) {
      if (!IsLocalName(v)) SyntaxError(v.pos(), ":as must be followed by a symbol");
      Bind(v, g, out);
    } else if (k.is_keyword("or")) {
      continue;
    } else if (k.is_symbol() || k.is_vector() || k.is_map()) {
      Destructure(k, get(v, k.is_symbol() ? default_for(k) : nullptr), out);
    } else {
      SyntaxError(k.pos(), "bad map destructuring key " + Print(k));
    }
  }
}

}  // namespace

void Destructure(const edn::Value& pattern, const edn::Value& init, edn::Vec* out) {
  if (IsLocalName(pattern)) {
    Bind(pattern, init, out);
  } else if (pattern.is_vector()) {
    DestructureVector(pattern, init, out);
  } else if (pattern.is_map()) {
    DestructureMap(pattern, init, out);
  } else {
    SyntaxError(pattern.pos(), "unsupported binding form: " + Print(pattern));
  }
}

}  // namespace mentat::script
