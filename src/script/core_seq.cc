// Sequence functions and higher-order functions. Sequences are eager: map, filter and
// friends return lists; (range) and ranges in general are the one lazy sequence, so
// (take 5 (range)) works; iterate, cycle and (repeat x) without a count are refused.
#include <cmath>

#include "script/core.h"
#include "script/print.h"

namespace mentat::script {

namespace {

using Args = const Val*;

Val Call1(Interp& in, const Val& f, const Val& x) { return in.Apply(f, &x, 1); }

// The results of map and filter are built by Out: ListBuilder (lists), VecBuilder
// (vectors) or Buffer (a ValVec, for results that are walked again), element by element.
struct Buffer {
  ValVec v;
  void Add(Val x) { v.push_back(std::move(x)); }
  ValVec Build() { return std::move(v); }
};

// map over several collections: stops at the shortest.
template <typename Out>
auto MapMany(Interp& in, const Val& f, Args colls, size_t n) {
  std::vector<ValVec, Charged<ValVec>> cs;
  size_t len = SIZE_MAX;
  for (size_t i = 0; i < n; ++i) {
    cs.push_back(Elements(in, colls[i]));
    len = std::min(len, cs.back().size());
  }
  Out out;
  ValVec args(n);
  for (size_t k = 0; k < len; ++k) {
    for (size_t i = 0; i < n; ++i) args[i] = cs[i][k];
    out.Add(in.Apply(f, args.data(), n));
  }
  return out.Build();
}

template <typename Out>
auto MapOne(Interp& in, const Val& f, const Val& coll) {
  Out out;
  ForEach(coll, [&](const Val& x) {
    out.Add(Call1(in, f, x));
    return true;
  });
  return out.Build();
}

template <typename Out>
auto DoMap(Interp& in, Args a, size_t n) {
  return n == 2 ? MapOne<Out>(in, a[0], a[1]) : MapMany<Out>(in, a[0], a + 1, n - 1);
}

template <typename Out>
Val Filter(Interp& in, const Val& pred, const Val& coll, bool keep) {
  Out out;
  ForEach(coll, [&](const Val& x) {
    if (Call1(in, pred, x).truthy() == keep) out.Add(x);
    return true;
  });
  return out.Build();
}

Val Range(Args a, size_t n, const FnObj& s) {
  if (n == 0) return RangeSeq(0, 1, SIZE_MAX / 2);
  bool ints = true;
  for (size_t i = 0; i < n; ++i) ints = ints && a[i].is(Type::kInt);
  if (ints) {
    int64_t start = n >= 2 ? a[0].as_int() : 0;
    int64_t end = n >= 2 ? a[1].as_int() : a[0].as_int();
    int64_t step = n == 3 ? a[2].as_int() : 1;
    if (step == 0) Fail("range: the step must not be zero");
    __int128 span = static_cast<__int128>(end) - start;
    if ((span > 0) != (step > 0) || span == 0) return Val::EmptyList();
    __int128 count = (span + step + (step > 0 ? -1 : 1)) / step;
    return RangeSeq(start, step, static_cast<size_t>(count));
  }
  double start = n >= 2 ? NumArg(s, a[0]) : 0;
  double end = n >= 2 ? NumArg(s, a[1]) : NumArg(s, a[0]);
  double step = n == 3 ? NumArg(s, a[2]) : 1;
  if (step == 0 || std::isnan(step)) Fail("range: the step must not be zero");
  ListBuilder out;
  for (double x = start; step > 0 ? x < end : x > end; x += step) {
    if (out.size() > 100000000) Fail("range: too many elements");
    // As in Clojure, the first element is the start as given: (range 0 1 0.5) is (0 0.5).
    out.Add(out.size() == 0 && n >= 2 ? a[0] : Val::Float(x));
  }
  return out.Build();
}

Val Take(int64_t n, const Val& coll) {
  ListBuilder out;
  if (n <= 0) return Val::EmptyList();
  ForEach(coll, [&](const Val& x) {
    out.Add(x);
    return static_cast<int64_t>(out.size()) < n;
  });
  return out.Build();
}

Val Drop(int64_t n, const Val& coll) {
  if (coll.is(Type::kSeq) && coll.as<SeqView>()->kind == SeqKind::kRange) {
    const SeqView* r = coll.as<SeqView>();
    if (n >= static_cast<int64_t>(r->n)) return Val::EmptyList();
    if (n <= 0) return coll;
    return RangeSeq(r->start + r->step * n, r->step, r->n - static_cast<size_t>(n));
  }
  ListBuilder out;
  int64_t k = 0;
  ForEach(coll, [&](const Val& x) {
    if (k++ >= n) out.Add(x);
    return true;
  });
  return out.Build();
}

// The function values built by partial, comp, constantly ...
// Those that walk their bound values charge a step per value.
Val PartialFn(Interp& in, Args a, size_t n, const FnObj& self) {
  in.Steps(static_cast<int64_t>(self.data.size()));
  ValVec args(self.data.begin() + 1, self.data.end());
  args.insert(args.end(), a, a + n);
  return in.Apply(self.data[0], args.data(), args.size());
}

Val CompFn(Interp& in, Args a, size_t n, const FnObj& self) {
  size_t k = self.data.size();
  in.Steps(static_cast<int64_t>(k));
  Val v = in.Apply(self.data[k - 1], a, n);
  for (size_t i = k - 1; i-- > 0;) v = Call1(in, self.data[i], v);
  return v;
}

Val ConstantlyFn(Interp&, Args, size_t, const FnObj& self) { return self.data[0]; }

Val ComplementFn(Interp& in, Args a, size_t n, const FnObj& self) {
  return Val::Bool(!in.Apply(self.data[0], a, n).truthy());
}

Val JuxtFn(Interp& in, Args a, size_t n, const FnObj& self) {
  VecBuilder b;  // a step per function
  for (const Val& f : self.data) b.Add(in.Apply(f, a, n));
  return b.Build();
}

Val FnilFn(Interp& in, Args a, size_t n, const FnObj& self) {
  in.Steps(static_cast<int64_t>(self.data.size()));
  ValVec args(a, a + n);
  for (size_t i = 0; i + 1 < self.data.size() && i < n; ++i) {
    if (args[i].is_nil()) args[i] = self.data[i + 1];
  }
  return in.Apply(self.data[0], args.data(), n);
}

Val MemoFn(Interp& in, Args a, size_t n, const FnObj& self) {
  AtomObj* cache = self.data[1].as<AtomObj>();
  Val key = VecFrom(ValVec(a, a + n));
  if (cache->value.is(Type::kMap)) {
    if (const Val* hit = MapFind(cache->value, key)) return *hit;
  }
  Val v = in.Apply(self.data[0], a, n);
  cache->value = MapAssoc(cache->value.is_nil() ? Val::EmptyMap() : cache->value, key, v);
  return v;
}

void Flatten(const Val& x, ListBuilder* out) {
  NestGuard nest;
  ForEach(x, [&](const Val& e) {
    if (e.is_sequential()) {
      Flatten(e, out);
    } else {
      out->Add(e);
    }
    return true;
  });
}

Val Partition(Interp& in, Args a, size_t n, const FnObj& s, bool all) {
  int64_t size = IntArg(s, a[0]);
  int64_t step = n == 3 ? IntArg(s, a[1]) : size;
  if (size <= 0 || step <= 0) Fail(s.name + " needs a positive size and step");
  ValVec xs = Elements(in, a[n - 1]);
  ListBuilder out;
  for (size_t i = 0; i < xs.size(); i += static_cast<size_t>(step)) {
    size_t end = std::min(xs.size(), i + static_cast<size_t>(size));
    if (!all && end - i < static_cast<size_t>(size)) break;
    ListBuilder part;
    for (size_t k = i; k < end; ++k) part.Add(xs[k]);
    out.Add(part.Build());
  }
  return out.Build();
}

[[noreturn]] void Infinite(const FnObj& s) {
  Fail(s.name +
       " would build an infinite sequence (sequences are eager here; use loop, range "
       "or repeat with a count)");
}

}  // namespace

ValVec Elements(Interp&, const Val& coll) { return ToVector(coll); }

Val NativeClosure(const char* name, NativeFn fn, ValVec data) {
  Ref<FnObj> fo = Make<FnObj>(data.size() * sizeof(Val));
  fo->native = fn;
  fo->name = name;
  fo->data.assign(std::make_move_iterator(data.begin()), std::make_move_iterator(data.end()));
  return Val::Object(Type::kFn, fo.get());
}

int CompareWith(Interp& in, const Val& cmp, const Val& a, const Val& b) {
  if (cmp.is_nil()) return ClojureCompare(a, b);
  Val r = in.Call(cmp, {a, b});
  if (r.is(Type::kInt)) return r.as_int() < 0 ? -1 : r.as_int() > 0 ? 1 : 0;
  if (r.is(Type::kFloat)) return r.as_double() < 0 ? -1 : r.as_double() > 0 ? 1 : 0;
  if (r.truthy()) return -1;
  return in.Call(cmp, {b, a}).truthy() ? 1 : 0;
}

void SortVals(ValVec* v, const std::function<int(const Val&, const Val&)>& cmp) {
  size_t n = v->size();
  ValVec tmp(n);
  Meter& meter = CurrentMeter();
  for (size_t width = 1; width < n; width *= 2) {
    meter.Steps(static_cast<int64_t>(n));  // each pass moves every element
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp((*v)[j], (*v)[i]) < 0 ? (*v)[j++] : (*v)[i++];
      while (i < mid) tmp[k++] = (*v)[i++];
      while (j < hi) tmp[k++] = (*v)[j++];
    }
    v->swap(tmp);
  }
}

void RegisterSeq(Interp& in) {
  in.DefNative(
      "map",
      [](Interp& in, Args a, size_t n, const FnObj&) { return DoMap<ListBuilder>(in, a, n); }, 2,
      -1);
  in.DefNative(
      "mapv",
      [](Interp& in, Args a, size_t n, const FnObj&) { return DoMap<VecBuilder>(in, a, n); }, 2,
      -1);
  in.DefNative(
      "mapcat",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        ListBuilder out;
        for (const Val& part : DoMap<Buffer>(in, a, n)) {
          ForEach(part, [&](const Val& x) {
            out.Add(x);
            return true;
          });
        }
        return out.Build();
      },
      2, -1);
  in.DefNative(
      "map-indexed",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ListBuilder out;
        int64_t i = 0;
        ForEach(a[1], [&](const Val& x) {
          out.Add(in.Call(a[0], {Val::Int(i++), x}));
          return true;
        });
        return out.Build();
      },
      2, 2);
  in.DefNative(
      "keep",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ListBuilder out;
        ForEach(a[1], [&](const Val& x) {
          Val r = Call1(in, a[0], x);
          if (!r.is_nil()) out.Add(std::move(r));
          return true;
        });
        return out.Build();
      },
      2, 2);
  in.DefNative(
      "filter",
      [](Interp& in, Args a, size_t, const FnObj&) {
        return Filter<ListBuilder>(in, a[0], a[1], true);
      },
      2, 2);
  in.DefNative(
      "filterv",
      [](Interp& in, Args a, size_t, const FnObj&) {
        return Filter<VecBuilder>(in, a[0], a[1], true);
      },
      2, 2);
  in.DefNative(
      "remove",
      [](Interp& in, Args a, size_t, const FnObj&) {
        return Filter<ListBuilder>(in, a[0], a[1], false);
      },
      2, 2);
  in.DefNative(
      "reduce",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        Val acc;
        bool have = n == 3;
        if (have) acc = a[1];
        ForEach(a[n - 1], [&](const Val& x) {
          if (!have) {
            acc = x;
            have = true;
          } else {
            acc = in.Call(a[0], {std::move(acc), x});
          }
          return true;
        });
        return have ? acc : in.Apply(a[0], nullptr, 0);
      },
      2, 3);
  in.DefNative(
      "reductions",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        ListBuilder out;
        Val last;
        if (n == 3) out.Add(last = a[1]);
        ForEach(a[n - 1], [&](const Val& x) {
          last = out.size() == 0 ? x : in.Call(a[0], {last, x});
          out.Add(last);
          return true;
        });
        if (out.size() == 0) out.Add(in.Apply(a[0], nullptr, 0));
        return out.Build();
      },
      2, 3);
  in.DefNative(
      "reduce-kv",
      [](Interp& in, Args a, size_t, const FnObj&) {
        Val acc = a[1];
        if (a[2].is(Type::kMap)) {
          ForEachEntry(a[2], [&](const Val& k, const Val& v) {
            acc = in.Call(a[0], {std::move(acc), k, v});
            return true;
          });
        } else {
          int64_t i = 0;
          ForEach(a[2], [&](const Val& v) {
            acc = in.Call(a[0], {std::move(acc), Val::Int(i++), v});
            return true;
          });
        }
        return acc;
      },
      3, 3);
  in.DefNative(
      "range", [](Interp&, Args a, size_t n, const FnObj& s) { return Range(a, n, s); }, 0, 3);
  in.DefNative(
      "take", [](Interp&, Args a, size_t, const FnObj& s) { return Take(IntArg(s, a[0]), a[1]); },
      2, 2);
  in.DefNative(
      "drop", [](Interp&, Args a, size_t, const FnObj& s) { return Drop(IntArg(s, a[0]), a[1]); },
      2, 2);
  in.DefNative(
      "take-last",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        ValVec xs = Elements(in, a[1]);
        int64_t n = std::max<int64_t>(0, IntArg(s, a[0]));
        size_t from = xs.size() > static_cast<size_t>(n) ? xs.size() - static_cast<size_t>(n) : 0;
        if (from == xs.size()) return Val();
        ListBuilder out;
        for (size_t i = from; i < xs.size(); ++i) out.Add(xs[i]);
        return out.Build();
      },
      2, 2);
  in.DefNative(
      "drop-last",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        ValVec xs = Elements(in, a[n - 1]);
        int64_t k = n == 2 ? std::max<int64_t>(0, IntArg(s, a[0])) : 1;
        xs.resize(xs.size() > static_cast<size_t>(k) ? xs.size() - static_cast<size_t>(k) : 0);
        return ListOf(std::move(xs));
      },
      1, 2);
  in.DefNative(
      "butlast",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ValVec xs = Elements(in, a[0]);
        if (xs.size() <= 1) return Val();
        xs.pop_back();
        return ListOf(std::move(xs));
      },
      1, 1);
  in.DefNative(
      "take-while",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ListBuilder out;
        ForEach(a[1], [&](const Val& x) {
          if (!Call1(in, a[0], x).truthy()) return false;
          out.Add(x);
          return true;
        });
        return out.Build();
      },
      2, 2);
  in.DefNative(
      "drop-while",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ListBuilder out;
        bool dropping = true;
        ForEach(a[1], [&](const Val& x) {
          if (dropping && Call1(in, a[0], x).truthy()) return true;
          dropping = false;
          out.Add(x);
          return true;
        });
        return out.Build();
      },
      2, 2);
  in.DefNative(
      "split-at",
      [](Interp&, Args a, size_t, const FnObj& s) {
        int64_t n = IntArg(s, a[0]);
        return Vec2(Take(n, a[1]), Drop(n, a[1]));
      },
      2, 2);
  in.DefNative(
      "split-with",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ListBuilder head, tail;
        ForEach(a[1], [&](const Val& x) {
          (tail.size() == 0 && Call1(in, a[0], x).truthy() ? head : tail).Add(x);
          return true;
        });
        return Vec2(head.Build(), tail.Build());
      },
      2, 2);
  in.DefNative(
      "sort",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        ValVec xs = Elements(in, a[n - 1]);
        Val cmp = n == 2 ? a[0] : Val();
        SortVals(&xs, [&](const Val& x, const Val& y) { return CompareWith(in, cmp, x, y); });
        return ListOf(std::move(xs));
      },
      1, 2);
  in.DefNative(
      "sort-by",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        ValVec xs = Elements(in, a[n - 1]);
        ValVec keys = MapOne<Buffer>(in, a[0], a[n - 1]);
        Val cmp = n == 3 ? a[1] : Val();
        ValVec idx;
        for (size_t i = 0; i < xs.size(); ++i) idx.push_back(Val::Int(static_cast<int64_t>(i)));
        SortVals(&idx, [&](const Val& i, const Val& j) {
          return CompareWith(in, cmp, keys[static_cast<size_t>(i.as_int())],
                             keys[static_cast<size_t>(j.as_int())]);
        });
        ListBuilder out;
        for (const Val& i : idx) out.Add(xs[static_cast<size_t>(i.as_int())]);
        return out.Build();
      },
      2, 3);
  in.DefNative(
      "group-by",
      [](Interp& in, Args a, size_t, const FnObj&) {
        Val out = Val::EmptyMap();
        ForEach(a[1], [&](const Val& x) {
          Val k = Call1(in, a[0], x);
          const Val* group = MapFind(out, k);
          out = MapAssoc(out, k, VecConj(group ? *group : Val::EmptyVector(), x));
          return true;
        });
        return out;
      },
      2, 2);
  in.DefNative(
      "frequencies",
      [](Interp&, Args a, size_t, const FnObj&) {
        Val out = Val::EmptyMap();
        ForEach(a[0], [&](const Val& x) {
          const Val* n = MapFind(out, x);
          out = MapAssoc(out, x, Val::Int(n ? n->as_int() + 1 : 1));
          return true;
        });
        return out;
      },
      1, 1);
  in.DefNative(
      "distinct",
      [](Interp&, Args a, size_t, const FnObj&) {
        Val seen = Val::EmptySet();
        ListBuilder out;
        ForEach(a[0], [&](const Val& x) {
          if (TreeFind(seen.as<TNode>(), x)) return true;
          seen = SetConj(seen, x);
          out.Add(x);
          return true;
        });
        return out.Build();
      },
      1, 1);
  in.DefNative(
      "some",
      [](Interp& in, Args a, size_t, const FnObj&) {
        Val found;
        ForEach(a[1], [&](const Val& x) {
          Val r = Call1(in, a[0], x);
          if (!r.truthy()) return true;
          found = r;
          return false;
        });
        return found;
      },
      2, 2);
  for (const char* name : {"every?", "not-any?", "not-every?"}) {
    in.DefNative(
        name,
        [](Interp& in, Args a, size_t, const FnObj& s) {
          bool want = s.name != "not-any?";  // every? and not-every? test for truth
          bool all =
              ForEach(a[1], [&](const Val& x) { return Call1(in, a[0], x).truthy() == want; });
          return Val::Bool(s.name == "not-every?" ? !all : all);
        },
        2, 2);
  }
  in.DefNative(
      "apply",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        ValVec args(a + 1, a + n - 1);
        if (a[n - 1].is_coll()) ReserveValues(&args, Count(a[n - 1]));
        ForEach(a[n - 1], [&](const Val& x) {
          args.push_back(x);
          return true;
        });
        return in.Apply(a[0], args.data(), args.size());
      },
      2, -1);
  in.DefNative(
      "partial",
      [](Interp&, Args a, size_t n, const FnObj&) {
        return NativeClosure("partial", PartialFn, ValVec(a, a + n));
      },
      1, -1);
  in.DefNative(
      "comp",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        if (n == 0) return *in.CoreFn("identity");
        return NativeClosure("comp", CompFn, ValVec(a, a + n));
      },
      0, -1);
  in.DefNative(
      "identity", [](Interp&, Args a, size_t, const FnObj&) { return a[0]; }, 1, 1);
  in.DefNative(
      "constantly",
      [](Interp&, Args a, size_t, const FnObj&) {
        return NativeClosure("constantly", ConstantlyFn, {a[0]});
      },
      1, 1);
  in.DefNative(
      "complement",
      [](Interp&, Args a, size_t, const FnObj&) {
        return NativeClosure("complement", ComplementFn, {a[0]});
      },
      1, 1);
  in.DefNative(
      "juxt",
      [](Interp&, Args a, size_t n, const FnObj&) {
        return NativeClosure("juxt", JuxtFn, ValVec(a, a + n));
      },
      1, -1);
  in.DefNative(
      "fnil",
      [](Interp&, Args a, size_t n, const FnObj&) {
        return NativeClosure("fnil", FnilFn, ValVec(a, a + n));
      },
      2, 4);
  in.DefNative(
      "memoize",
      [](Interp&, Args a, size_t, const FnObj&) {
        Ref<AtomObj> cache = Make<AtomObj>(0);
        return NativeClosure("memoize", MemoFn, {a[0], Val::Object(Type::kAtom, cache.get())});
      },
      1, 1);
  in.DefNative(
      "flatten",
      [](Interp&, Args a, size_t, const FnObj&) {
        ListBuilder out;
        if (a[0].is_sequential()) Flatten(a[0], &out);
        return out.Build();
      },
      1, 1);
  in.DefNative(
      "interleave",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        std::vector<ValVec, Charged<ValVec>> cs;
        size_t len = SIZE_MAX;
        for (size_t i = 0; i < n; ++i) {
          cs.push_back(Elements(in, a[i]));
          len = std::min(len, cs.back().size());
        }
        ListBuilder out;
        for (size_t k = 0; k < len; ++k) {
          for (auto& c : cs) out.Add(c[k]);
        }
        return out.Build();
      },
      1, -1);
  in.DefNative(
      "interpose",
      [](Interp&, Args a, size_t, const FnObj&) {
        ListBuilder out;
        ForEach(a[1], [&](const Val& x) {
          if (out.size() > 0) out.Add(a[0]);
          out.Add(x);
          return true;
        });
        return out.Build();
      },
      2, 2);
  in.DefNative(
      "partition",
      [](Interp& in, Args a, size_t n, const FnObj& s) { return Partition(in, a, n, s, false); }, 2,
      3);
  in.DefNative(
      "partition-all",
      [](Interp& in, Args a, size_t n, const FnObj& s) { return Partition(in, a, n, s, true); }, 2,
      3);
  in.DefNative(
      "repeat",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        if (n == 1) Infinite(s);
        int64_t k = IntArg(s, a[0]);
        in.Steps(std::max<int64_t>(k, 0));  // fails up front past the step limit
        Val out = Val::EmptyList();
        for (int64_t i = 0; i < k; ++i) out = Cons(a[1], std::move(out));
        return out;
      },
      1, 2);
  for (const char* name : {"iterate", "cycle", "repeatedly", "lazy-seq"}) {
    in.DefNative(
        name, [](Interp&, Args, size_t, const FnObj& s) -> Val { Infinite(s); }, 0, -1);
  }
  for (const char* name : {"max-key", "min-key"}) {
    in.DefNative(
        name,
        [](Interp& in, Args a, size_t n, const FnObj& s) {
          bool max = s.name == "max-key";
          Val best = a[1];
          double best_k = NumArg(s, Call1(in, a[0], a[1]));
          for (size_t i = 2; i < n; ++i) {
            double k = NumArg(s, Call1(in, a[0], a[i]));
            if (max ? k >= best_k : k <= best_k) {
              best = a[i];
              best_k = k;
            }
          }
          return best;
        },
        2, -1);
  }
  in.DefNative(
      "run!",
      [](Interp& in, Args a, size_t, const FnObj&) {
        ForEach(a[1], [&](const Val& x) {
          Call1(in, a[0], x);
          return true;
        });
        return Val();
      },
      2, 2);
  in.DefNative(
      "doall", [](Interp&, Args a, size_t n, const FnObj&) { return a[n - 1]; }, 1, 2);
  in.DefNative(
      "dorun", [](Interp&, Args, size_t, const FnObj&) { return Val(); }, 1, 2);
  in.DefNative(
      "rand-nth",
      [](Interp& in, Args a, size_t, const FnObj&) {
        size_t n = Count(a[0]);
        if (n == 0) Fail("rand-nth of an empty collection");
        Val r = in.Call(*in.CoreFn("rand-int"), {Val::Int(static_cast<int64_t>(n))});
        return Nth(a[0], r.as_int(), nullptr);
      },
      1, 1);
  for (const char* name : {"update-vals", "update-keys"}) {
    in.DefNative(
        name,
        [](Interp& in, Args a, size_t, const FnObj& s) {
          bool vals = s.name == "update-vals";
          MapBuilder b;
          if (a[0].is(Type::kMap)) {
            ForEachEntry(a[0], [&](const Val& k, const Val& v) {
              if (vals) {
                b.Add(k, Call1(in, a[1], v));
              } else {
                b.Add(Call1(in, a[1], k), v);
              }
              return true;
            });
          }
          return b.Build();
        },
        2, 2);
  }
}

}  // namespace mentat::script
