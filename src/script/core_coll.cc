// Collection constructors, access and update functions, type predicates and equality.
#include "script/core.h"
#include "script/print.h"

namespace mentat::script {

namespace {

using Args = const Val*;

// Seq(c), or () when empty (for cons cells).
Val SeqOrEmpty(const Val& c) {
  Val s = Seq(c);
  return s.is_nil() ? Val::EmptyList() : s;
}

Val MapOfPairs(Args a, size_t n) {
  if (n % 2 != 0) Fail("no value supplied for key: " + PrBrief(a[n - 1]));
  MapBuilder b;
  for (size_t i = 0; i < n; i += 2) b.Add(a[i], a[i + 1]);
  return b.Build();
}

Val SetOf(const Val& coll) {
  MapBuilder b(true);
  ForEach(coll, [&](const Val& x) {
    b.Add(x);
    return true;
  });
  return b.Build();
}

Val GetIn(const Val& m, const Val& ks, const Val& dflt) {
  Val cur = m;
  bool missing = false;
  ForEach(ks, [&](const Val& k) {
    if (!(cur.is(Type::kMap) || cur.is(Type::kSet) || cur.is(Type::kVector) ||
          cur.is(Type::kString)) ||
        (!cur.is(Type::kString) && !Contains(cur, k))) {
      missing = true;
      return false;
    }
    cur = Get(cur, k);
    return true;
  });
  return missing ? dflt : cur;
}

// Recurses once per key of the path: the result nests that deep.
Val AssocIn(const Val& m, const ValVec& ks, size_t i, const Val& v) {
  NestGuard nest;
  if (i + 1 == ks.size()) return Assoc(m, ks[i], v);
  return Assoc(m, ks[i], AssocIn(Get(m, ks[i]), ks, i + 1, v));
}

Val UpdateIn(Interp& in, const Val& m, const ValVec& ks, size_t i, const Val& f, Args extra,
             size_t n) {
  NestGuard nest;
  if (i + 1 < ks.size()) {
    return Assoc(m, ks[i], UpdateIn(in, Get(m, ks[i]), ks, i + 1, f, extra, n));
  }
  ValVec args{Get(m, ks[i])};
  args.insert(args.end(), extra, extra + n);
  return Assoc(m, ks[i], in.Apply(f, args.data(), args.size()));
}

ValVec PathArg(const FnObj& self, const Val& ks) {
  if (!ks.is_sequential() || Count(ks) == 0) Fail(self.name + " needs a non-empty key path");
  return ToVector(ks);
}

Val Last(const Val& c) {
  if (c.is(Type::kVector)) return c.obj() ? VecNth(c, VecCount(c) - 1) : Val();
  Val last;
  ForEach(c, [&](const Val& x) {
    last = x;
    return true;
  });
  return last;
}

Val Empty(const Val& c) {
  switch (c.type()) {
    case Type::kList:
    case Type::kSeq:
      return Val::EmptyList();
    case Type::kVector:
      return Val::EmptyVector();
    case Type::kMap:
      return Val::EmptyMap();
    case Type::kSet:
      return Val::EmptySet();
    default:
      return Val();
  }
}

bool Identical(const Val& a, const Val& b) {
  if (a.type() != b.type()) return false;
  if (a.heap()) return a.obj() == b.obj();
  return a.is(Type::kFloat) ? a.as_double() == b.as_double() : a.as_int() == b.as_int();
}

#define MENTAT_PRED(NAME, EXPR)                         \
  in.DefNative(                                         \
      NAME,                                             \
      [](Interp&, const Val* a, size_t, const FnObj&) { \
        const Val& x = a[0];                            \
        return Val::Bool(EXPR);                         \
      },                                                \
      1, 1)

}  // namespace

void RegisterColl(Interp& in) {
  in.DefNative(
      "list",
      [](Interp&, Args a, size_t n, const FnObj&) {
        ListBuilder out;
        for (size_t i = 0; i < n; ++i) out.Add(a[i]);
        return out.Build();
      },
      0, -1);
  in.DefNative(
      "vector", [](Interp&, Args a, size_t n, const FnObj&) { return VecFrom(ValVec(a, a + n)); },
      0, -1);
  in.DefNative(
      "vec",
      [](Interp& in, Args a, size_t, const FnObj&) {
        if (a[0].is(Type::kVector)) return a[0];
        return VecFrom(Elements(in, a[0]));
      },
      1, 1);
  for (const char* name : {"hash-map", "array-map", "sorted-map"}) {
    in.DefNative(
        name, [](Interp&, Args a, size_t n, const FnObj&) { return MapOfPairs(a, n); }, 0, -1);
  }
  for (const char* name : {"hash-set", "sorted-set"}) {
    in.DefNative(
        name,
        [](Interp&, Args a, size_t n, const FnObj&) {
          MapBuilder b(true);
          for (size_t i = 0; i < n; ++i) b.Add(a[i]);
          return b.Build();
        },
        0, -1);
  }
  in.DefNative(
      "set",
      [](Interp&, Args a, size_t, const FnObj&) {
        return a[0].is(Type::kSet) ? a[0] : SetOf(a[0]);
      },
      1, 1);
  in.DefNative(
      "get",
      [](Interp&, Args a, size_t n, const FnObj&) {
        return Get(a[0], a[1], n == 3 ? a[2] : Val());
      },
      2, 3);
  in.DefNative(
      "get-in",
      [](Interp&, Args a, size_t n, const FnObj&) {
        return GetIn(a[0], a[1], n == 3 ? a[2] : Val());
      },
      2, 3);
  in.DefNative(
      "assoc",
      [](Interp&, Args a, size_t n, const FnObj&) {
        if (n % 2 == 0) Fail("assoc expects an even number of keys and values");
        Val m = a[0];
        for (size_t i = 1; i < n; i += 2) m = Assoc(m, a[i], a[i + 1]);
        return m;
      },
      3, -1);
  in.DefNative(
      "assoc-in",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return AssocIn(a[0], PathArg(s, a[1]), 0, a[2]);
      },
      3, 3);
  in.DefNative(
      "dissoc",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        if (a[0].is_nil()) return Val();
        if (!a[0].is(Type::kMap)) Fail(s.name + " expects a map, got a " + TypeName(a[0].type()));
        Val m = a[0];
        for (size_t i = 1; i < n; ++i) m = MapDissoc(m, a[i]);
        return m;
      },
      1, -1);
  in.DefNative(
      "update",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        ValVec args{Get(a[0], a[1])};
        args.insert(args.end(), a + 3, a + n);
        return Assoc(a[0], a[1], in.Apply(a[2], args.data(), args.size()));
      },
      3, -1);
  in.DefNative(
      "update-in",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        return UpdateIn(in, a[0], PathArg(s, a[1]), 0, a[2], a + 3, n - 3);
      },
      3, -1);
  in.DefNative(
      "conj",
      [](Interp&, Args a, size_t n, const FnObj&) {
        if (n == 0) return Val::EmptyVector();
        Val c = a[0];
        for (size_t i = 1; i < n; ++i) c = Conj(c, a[i]);
        return c;
      },
      0, -1);
  in.DefNative(
      "cons", [](Interp&, Args a, size_t, const FnObj&) { return Cons(a[0], SeqOrEmpty(a[1])); }, 2,
      2);
  in.DefNative(
      "first", [](Interp&, Args a, size_t, const FnObj&) { return First(a[0]); }, 1, 1);
  in.DefNative(
      "second", [](Interp&, Args a, size_t, const FnObj&) { return First(Next(a[0])); }, 1, 1);
  in.DefNative(
      "rest", [](Interp&, Args a, size_t, const FnObj&) { return Rest(a[0]); }, 1, 1);
  in.DefNative(
      "next", [](Interp&, Args a, size_t, const FnObj&) { return Next(a[0]); }, 1, 1);
  in.DefNative(
      "last", [](Interp&, Args a, size_t, const FnObj&) { return Last(a[0]); }, 1, 1);
  in.DefNative(
      "nth",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        return Nth(a[0], IntArg(s, a[1], "an integer index"), n == 3 ? &a[2] : nullptr);
      },
      2, 3);
  in.DefNative(
      "nthnext",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        Val c = Seq(a[0]);
        for (int64_t i = IntArg(s, a[1]); i > 0 && !c.is_nil(); --i) {
          in.Step();
          c = Next(c);
        }
        return c;
      },
      2, 2);
  in.DefNative(
      "nthrest",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        Val c = a[0];
        for (int64_t i = IntArg(s, a[1]); i > 0 && !Seq(c).is_nil(); --i) {
          in.Step();
          c = Rest(c);
        }
        return c;
      },
      2, 2);
  in.DefNative(
      "count",
      [](Interp&, Args a, size_t, const FnObj&) {
        return Val::Int(static_cast<int64_t>(Count(a[0])));
      },
      1, 1);
  in.DefNative(
      "seq", [](Interp&, Args a, size_t, const FnObj&) { return Seq(a[0]); }, 1, 1);
  in.DefNative(
      "empty?", [](Interp&, Args a, size_t, const FnObj&) { return Val::Bool(Seq(a[0]).is_nil()); },
      1, 1);
  in.DefNative(
      "not-empty",
      [](Interp&, Args a, size_t, const FnObj&) { return Seq(a[0]).is_nil() ? Val() : a[0]; }, 1,
      1);
  in.DefNative(
      "empty", [](Interp&, Args a, size_t, const FnObj&) { return Empty(a[0]); }, 1, 1);
  in.DefNative(
      "contains?",
      [](Interp&, Args a, size_t, const FnObj&) { return Val::Bool(Contains(a[0], a[1])); }, 2, 2);
  for (const char* name : {"keys", "vals"}) {
    in.DefNative(
        name,
        [](Interp&, Args a, size_t, const FnObj& s) {
          if (a[0].is_nil()) return Val();
          if (!a[0].is(Type::kMap)) Fail(s.name + " expects a map, got a " + TypeName(a[0].type()));
          bool keys = s.name == "keys";
          ListBuilder out;
          ForEachEntry(a[0], [&](const Val& k, const Val& v) {
            out.Add(keys ? k : v);
            return true;
          });
          return out.size() == 0 ? Val() : out.Build();
        },
        1, 1);
  }
  in.DefNative(
      "find",
      [](Interp&, Args a, size_t, const FnObj&) {
        if (!a[0].is(Type::kMap)) return Val();
        TNode* t = TreeFind(a[0].as<TNode>(), a[1]);
        return t ? Vec2(t->key, t->val) : Val();
      },
      2, 2);
  in.DefNative(
      "key", [](Interp&, Args a, size_t, const FnObj&) { return Nth(a[0], 0, nullptr); }, 1, 1);
  in.DefNative(
      "val", [](Interp&, Args a, size_t, const FnObj&) { return Nth(a[0], 1, nullptr); }, 1, 1);
  in.DefNative(
      "disj",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        if (a[0].is_nil()) return Val();
        if (!a[0].is(Type::kSet)) Fail(s.name + " expects a set, got a " + TypeName(a[0].type()));
        Val out = a[0];
        for (size_t i = 1; i < n; ++i) out = SetDisj(out, a[i]);
        return out;
      },
      1, -1);
  in.DefNative(
      "peek",
      [](Interp&, Args a, size_t, const FnObj&) {
        if (a[0].is(Type::kVector)) return a[0].obj() ? VecNth(a[0], VecCount(a[0]) - 1) : Val();
        return First(a[0]);
      },
      1, 1);
  in.DefNative(
      "pop",
      [](Interp&, Args a, size_t, const FnObj&) {
        if (a[0].is_nil()) return Val();
        if (Count(a[0]) == 0) Fail("cannot pop an empty collection");
        if (a[0].is(Type::kVector)) return VecPop(a[0]);
        if (a[0].is_seq()) return Rest(a[0]);
        Fail(std::string("pop is not supported on a ") + TypeName(a[0].type()));
      },
      1, 1);
  in.DefNative(
      "subvec",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        if (!a[0].is(Type::kVector)) Fail("subvec expects a vector");
        int64_t cnt = static_cast<int64_t>(VecCount(a[0]));
        int64_t from = IntArg(s, a[1]), to = n == 3 ? IntArg(s, a[2]) : cnt;
        if (from < 0 || to > cnt || from > to) Fail("subvec: index out of bounds");
        VecBuilder b;
        for (int64_t i = from; i < to; ++i) b.Add(VecNth(a[0], static_cast<size_t>(i)));
        return b.Build();
      },
      2, 3);
  in.DefNative(
      "reverse",
      [](Interp&, Args a, size_t, const FnObj&) {
        Val out = Val::EmptyList();
        ForEach(a[0], [&](const Val& x) {
          out = Cons(x, out);
          return true;
        });
        return out;
      },
      1, 1);
  in.DefNative(
      "into",
      [](Interp&, Args a, size_t, const FnObj&) {
        Val out = a[0].is_nil() ? Val::EmptyList() : a[0];
        ForEach(a[1], [&](const Val& x) {
          out = Conj(out, x);
          return true;
        });
        return out;
      },
      2, 2);
  in.DefNative(
      "concat",
      [](Interp&, Args a, size_t n, const FnObj&) {
        ListBuilder out;
        for (size_t i = 0; i < n; ++i) {
          ForEach(a[i], [&](const Val& x) {
            out.Add(x);
            return true;
          });
        }
        return out.Build();
      },
      0, -1);
  in.DefNative(
      "select-keys",
      [](Interp&, Args a, size_t, const FnObj&) {
        MapBuilder b;
        ForEach(a[1], [&](const Val& k) {
          if (a[0].is(Type::kMap) && Contains(a[0], k)) b.Add(k, Get(a[0], k));
          return true;
        });
        return b.Build();
      },
      2, 2);
  in.DefNative(
      "merge",
      [](Interp&, Args a, size_t n, const FnObj&) {
        Val out;
        for (size_t i = 0; i < n; ++i) {
          if (a[i].is_nil()) continue;
          out = out.is_nil() ? a[i] : Conj(out, a[i]);
        }
        return out;
      },
      0, -1);
  in.DefNative(
      "merge-with",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        Val out;
        for (size_t i = 1; i < n; ++i) {
          if (a[i].is_nil()) continue;
          if (!a[i].is(Type::kMap)) Fail(s.name + " expects maps, got a " + TypeName(a[i].type()));
          if (out.is_nil()) {
            out = a[i];
            continue;
          }
          ForEachEntry(a[i], [&](const Val& k, const Val& v) {
            const Val* old = MapFind(out, k);
            out = MapAssoc(out, k, old ? in.Call(a[0], {*old, v}) : v);
            return true;
          });
        }
        return out;
      },
      1, -1);
  in.DefNative(
      "zipmap",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ValVec ks = Elements(in, a[0]), vs = Elements(in, a[1]);
        MapBuilder b;
        for (size_t i = 0; i < ks.size() && i < vs.size(); ++i) b.Add(ks[i], vs[i]);
        return b.Build();
      },
      2, 2);
  in.DefNative(
      "=",
      [](Interp&, Args a, size_t n, const FnObj&) {
        for (size_t i = 0; i + 1 < n; ++i) {
          if (!Equal(a[i], a[i + 1])) return Val::Bool(false);
        }
        return Val::Bool(true);
      },
      1, -1);
  in.DefNative(
      "not=",
      [](Interp&, Args a, size_t n, const FnObj&) {
        for (size_t i = 0; i + 1 < n; ++i) {
          if (!Equal(a[i], a[i + 1])) return Val::Bool(true);
        }
        return Val::Bool(false);
      },
      1, -1);
  in.DefNative(
      "identical?",
      [](Interp&, Args a, size_t, const FnObj&) { return Val::Bool(Identical(a[0], a[1])); }, 2, 2);
  in.DefNative(
      "hash",
      [](Interp&, Args a, size_t, const FnObj&) {
        return Val::Int(static_cast<int64_t>(Hash(a[0]) >> 1));
      },
      1, 1);
  in.DefNative(
      "not", [](Interp&, Args a, size_t, const FnObj&) { return Val::Bool(!a[0].truthy()); }, 1, 1);
  MENTAT_PRED("boolean", x.truthy());
  MENTAT_PRED("nil?", x.is_nil());
  MENTAT_PRED("some?", !x.is_nil());
  MENTAT_PRED("true?", x.is(Type::kBool) && x.as_bool());
  MENTAT_PRED("false?", x.is(Type::kBool) && !x.as_bool());
  MENTAT_PRED("string?", x.is(Type::kString));
  MENTAT_PRED("keyword?", x.is(Type::kKeyword));
  MENTAT_PRED("symbol?", x.is(Type::kSymbol));
  MENTAT_PRED("char?", x.is(Type::kChar));
  MENTAT_PRED("boolean?", x.is(Type::kBool));
  MENTAT_PRED("inst?", x.is(Type::kInst));
  MENTAT_PRED("uuid?", x.is(Type::kUuid));
  MENTAT_PRED("map?", x.is(Type::kMap));
  MENTAT_PRED("vector?", x.is(Type::kVector));
  MENTAT_PRED("list?", x.is(Type::kList));
  MENTAT_PRED("set?", x.is(Type::kSet));
  MENTAT_PRED("seq?", x.is_seq());
  MENTAT_PRED("coll?", x.is_coll());
  MENTAT_PRED("sequential?", x.is_sequential());
  MENTAT_PRED("associative?", x.is(Type::kMap) || x.is(Type::kVector));
  MENTAT_PRED("seqable?", Seqable(x));
  MENTAT_PRED("fn?", x.is(Type::kFn));
  MENTAT_PRED("ifn?", x.is(Type::kFn) || x.is_named() || x.is(Type::kMap) || x.is(Type::kSet) ||
                          x.is(Type::kVector));
  MENTAT_PRED("map-entry?", x.is(Type::kVector) && VecCount(x) == 2);
  MENTAT_PRED("any?", ((void)x, true));
  MENTAT_PRED("simple-keyword?", x.is(Type::kKeyword) && x.ns().empty());
  MENTAT_PRED("qualified-keyword?", x.is(Type::kKeyword) && !x.ns().empty());
  MENTAT_PRED("simple-symbol?", x.is(Type::kSymbol) && x.ns().empty());
  MENTAT_PRED("qualified-symbol?", x.is(Type::kSymbol) && !x.ns().empty());
}

}  // namespace mentat::script
