// Sequence views and the generic collection operations (count, seq, first, nth, get,
// conj, assoc, iteration).
#include <algorithm>
#include <string>

#include "script/coll.h"

namespace mentat::script {

namespace {

Val View(SeqKind kind, Val src, size_t i, size_t n) {
  Ref<SeqView> s = Make<SeqView>(0);
  s->kind = kind;
  s->src = std::move(src);
  s->i = i;
  s->n = n;
  return Val::Object(Type::kSeq, s.get());
}

[[noreturn]] void NotSeqable(const Val& v) {
  Fail(std::string("don't know how to create a sequence from a ") + TypeName(v.type()));
}

}  // namespace

// ---- UTF-8 ----

char32_t DecodeUtf8(std::string_view s, size_t* off) {
  unsigned char c = static_cast<unsigned char>(s[*off]);
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || *off + len > s.size()) {
    ++*off;
    return len == 1 ? c : 0xFFFD;
  }
  if (len == 1) {
    ++*off;
    return c;
  }
  char32_t cp = c & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[*off + k]);
    if ((cc & 0xC0) != 0x80) {
      ++*off;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  *off += len;
  return cp;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

size_t CountCodePoints(std::string_view s) {
  CurrentMeter().Text(s.size());
  size_t n = 0;
  for (size_t off = 0; off < s.size(); ++n) DecodeUtf8(s, &off);
  return n;
}

// ---- Seq views ----

Val SeqView::First() const {
  switch (kind) {
    case SeqKind::kVec:
      return VecNth(src, i);
    case SeqKind::kTree: {
      TNode* t = TreeNth(src.as<TNode>(), i);
      return src.is(Type::kMap) ? Vec2(t->key, t->val) : t->key;
    }
    case SeqKind::kStr: {
      size_t off = i;
      return Val::Char(DecodeUtf8(src.str(), &off));
    }
    case SeqKind::kRange:
      return Val::Int(start);
  }
  return Val();
}

Val SeqView::Rest() const {
  if (Count() <= 1) return Val::EmptyList();
  switch (kind) {
    case SeqKind::kVec:
    case SeqKind::kTree:
      return View(kind, src, i + 1, 0);
    case SeqKind::kStr: {
      size_t off = i;
      DecodeUtf8(src.str(), &off);
      return View(kind, src, off, n - 1);
    }
    case SeqKind::kRange:
      return RangeSeq(start + step, step, n - 1);
  }
  return Val::EmptyList();
}

size_t SeqView::Count() const {
  switch (kind) {
    case SeqKind::kVec:
      return VecCount(src) - i;
    case SeqKind::kTree:
      return TreeSize(src.as<TNode>()) - i;
    case SeqKind::kStr:
    case SeqKind::kRange:
      return n;
  }
  return 0;
}

Val RangeSeq(int64_t start, int64_t step, size_t n) {
  if (n == 0) return Val::EmptyList();
  Ref<SeqView> s = Make<SeqView>(0);
  s->kind = SeqKind::kRange;
  s->start = start;
  s->step = step;
  s->n = n;
  return Val::Object(Type::kSeq, s.get());
}

// ---- Generic operations ----

size_t Count(const Val& c) {
  switch (c.type()) {
    case Type::kNil:
      return 0;
    case Type::kList:
      return c.obj() ? c.as<ListObj>()->count : 0;
    case Type::kSeq:
      return c.as<SeqObj>()->Count();
    case Type::kVector:
      return VecCount(c);
    case Type::kMap:
    case Type::kSet:
      return TreeSize(c.as<TNode>());
    case Type::kString:
      return CountCodePoints(c.str());
    default:
      Fail(std::string("count is not supported on a ") + TypeName(c.type()));
  }
}

bool Seqable(const Val& v) { return v.is_nil() || v.is_coll() || v.is(Type::kString); }

Val Seq(const Val& c) {
  switch (c.type()) {
    case Type::kNil:
      return Val();
    case Type::kList:
      return c.obj() ? c : Val();
    case Type::kSeq:
      return c;
    case Type::kVector:
      return c.obj() ? View(SeqKind::kVec, c, 0, 0) : Val();
    case Type::kMap:
    case Type::kSet:
      return c.obj() ? View(SeqKind::kTree, c, 0, 0) : Val();
    case Type::kString:
      return c.str().empty() ? Val() : View(SeqKind::kStr, c, 0, CountCodePoints(c.str()));
    default:
      NotSeqable(c);
  }
}

Val First(const Val& c) {
  switch (c.type()) {
    case Type::kNil:
      return Val();
    case Type::kList:
      return c.obj() ? c.as<ListObj>()->first : Val();
    case Type::kSeq:
      return c.as<SeqObj>()->First();
    case Type::kVector:
      return c.obj() ? VecNth(c, 0) : Val();
    default: {
      Val s = Seq(c);
      return s.is_nil() ? Val() : s.as<SeqObj>()->First();
    }
  }
}

Val Rest(const Val& c) {
  switch (c.type()) {
    case Type::kList:
      return c.obj() ? c.as<ListObj>()->rest : c;
    case Type::kSeq:
      return c.as<SeqObj>()->Rest();
    default: {
      Val s = Seq(c);
      if (s.is_nil()) return Val::EmptyList();
      return s.is(Type::kList) ? s.as<ListObj>()->rest : s.as<SeqObj>()->Rest();
    }
  }
}

Val Next(const Val& c) { return Seq(Rest(c)); }

Val Nth(const Val& c, int64_t i, const Val* not_found) {
  auto out_of_range = [&]() -> Val {
    if (not_found) return *not_found;
    Fail("index " + std::to_string(i) + " out of bounds");
  };
  if (i < 0) return out_of_range();
  size_t u = static_cast<size_t>(i);
  switch (c.type()) {
    case Type::kNil:
      return not_found ? *not_found : Val();
    case Type::kVector:
      return u < VecCount(c) ? VecNth(c, u) : out_of_range();
    case Type::kSeq: {
      const SeqView* s = c.as<SeqView>();
      if (u >= s->Count()) return out_of_range();
      if (s->kind == SeqKind::kVec) return VecNth(s->src, s->i + u);
      if (s->kind == SeqKind::kRange) return Val::Int(s->start + s->step * i);
      break;
    }
    case Type::kList:
    case Type::kString:
      break;
    case Type::kMap:
    case Type::kSet:
      Fail(std::string("nth is not supported on a ") + TypeName(c.type()));
    default:
      Fail(std::string("nth is not supported on a ") + TypeName(c.type()));
  }
  Val found;
  bool hit = false;
  size_t k = 0;
  ForEach(c, [&](const Val& x) {
    if (k++ == u) {
      found = x;
      hit = true;
      return false;
    }
    return true;
  });
  return hit ? found : out_of_range();
}

Val Get(const Val& c, const Val& key, const Val& not_found) {
  switch (c.type()) {
    case Type::kMap: {
      const Val* v = MapFind(c, key);
      return v ? *v : not_found;
    }
    case Type::kSet:
      return TreeFind(c.as<TNode>(), key) ? TreeFind(c.as<TNode>(), key)->key : not_found;
    case Type::kVector:
      if (key.is(Type::kInt) && key.as_int() >= 0 &&
          static_cast<size_t>(key.as_int()) < VecCount(c)) {
        return VecNth(c, static_cast<size_t>(key.as_int()));
      }
      return not_found;
    case Type::kString:
      if (key.is(Type::kInt)) return Nth(c, key.as_int(), &not_found);
      return not_found;
    default:
      return not_found;
  }
}

bool Contains(const Val& c, const Val& key) {
  switch (c.type()) {
    case Type::kMap:
    case Type::kSet:
      return TreeFind(c.as<TNode>(), key) != nullptr;
    case Type::kVector:
    case Type::kString:
      return key.is(Type::kInt) && key.as_int() >= 0 &&
             static_cast<size_t>(key.as_int()) < Count(c);
    case Type::kNil:
      return false;
    default:
      Fail(std::string("contains? is not supported on a ") + TypeName(c.type()));
  }
}

Val Conj(const Val& c, const Val& x) {
  switch (c.type()) {
    case Type::kNil:
      return Cons(x, Val::EmptyList());
    case Type::kList:
    case Type::kSeq:
      return Cons(x, c);
    case Type::kVector:
      return VecConj(c, x);
    case Type::kSet:
      return SetConj(c, x);
    case Type::kMap: {
      if (x.is(Type::kVector) && VecCount(x) == 2) return MapAssoc(c, VecNth(x, 0), VecNth(x, 1));
      if (x.is(Type::kMap)) {
        Val out = c;
        ForEachEntry(x, [&](const Val& k, const Val& v) {
          out = MapAssoc(out, k, v);
          return true;
        });
        return out;
      }
      if (x.is_nil()) return c;
      Fail("conj on a map needs a [key value] vector or a map, got a " +
           std::string(TypeName(x.type())));
    }
    default:
      Fail(std::string("conj is not supported on a ") + TypeName(c.type()));
  }
}

Val Assoc(const Val& c, const Val& k, const Val& v) {
  switch (c.type()) {
    case Type::kNil:
      return MapAssoc(Val::EmptyMap(), k, v);
    case Type::kMap:
      return MapAssoc(c, k, v);
    case Type::kVector:
      if (!k.is(Type::kInt) || k.as_int() < 0 || static_cast<size_t>(k.as_int()) > VecCount(c)) {
        Fail("assoc on a vector needs an index from 0 to " + std::to_string(VecCount(c)));
      }
      return VecAssoc(c, static_cast<size_t>(k.as_int()), v);
    default:
      Fail(std::string("assoc is not supported on a ") + TypeName(c.type()));
  }
}

// ---- Iteration ----

namespace {

bool ForEachVec(const Val& v, size_t from, const std::function<bool(const Val&)>& f) {
  Meter& m = CurrentMeter();
  size_t n = VecCount(v);
  for (size_t i = from; i < n; ++i) {
    m.Step();
    if (!f(VecNth(v, i))) return false;
  }
  return true;
}

// TreeForEach charges the steps.
bool ForEachTree(const Val& t, size_t from, const std::function<bool(const Val&)>& f) {
  bool map = t.is(Type::kMap);
  size_t k = 0;
  return TreeForEach(t.as<TNode>(), [&](TNode* n) {
    if (k++ < from) return true;
    return map ? f(Vec2(n->key, n->val)) : f(n->key);
  });
}

bool ForEachStr(const std::string& s, size_t off, const std::function<bool(const Val&)>& f) {
  Meter& m = CurrentMeter();
  while (off < s.size()) {
    m.Step();
    if (!f(Val::Char(DecodeUtf8(s, &off)))) return false;
  }
  return true;
}

}  // namespace

bool ForEach(const Val& coll, const std::function<bool(const Val&)>& f) {
  switch (coll.type()) {
    case Type::kNil:
      return true;
    case Type::kList: {
      Meter& m = CurrentMeter();
      const ListObj* c = coll.as<ListObj>();
      while (c) {
        m.Step();
        if (!f(c->first)) return false;
        if (!c->rest.is(Type::kList)) return ForEach(c->rest, f);  // a seq view: no deeper
        c = c->rest.as<ListObj>();
      }
      return true;
    }
    case Type::kSeq: {
      const SeqView* s = coll.as<SeqView>();
      switch (s->kind) {
        case SeqKind::kVec:
          return ForEachVec(s->src, s->i, f);
        case SeqKind::kTree:
          return ForEachTree(s->src, s->i, f);
        case SeqKind::kStr:
          return ForEachStr(s->src.str(), s->i, f);
        case SeqKind::kRange: {
          Meter& m = CurrentMeter();
          for (size_t k = 0; k < s->n; ++k) {
            m.Step();
            if (!f(Val::Int(s->start + s->step * static_cast<int64_t>(k)))) return false;
          }
          return true;
        }
      }
      return true;
    }
    case Type::kVector:
      return ForEachVec(coll, 0, f);
    case Type::kMap:
    case Type::kSet:
      return ForEachTree(coll, 0, f);
    case Type::kString:
      return ForEachStr(coll.str(), 0, f);
    default:
      NotSeqable(coll);
  }
}

bool ForEachEntry(const Val& map, const std::function<bool(const Val&, const Val&)>& f) {
  return TreeForEach(map.as<TNode>(), [&](TNode* n) { return f(n->key, n->val); });
}

void ReserveValues(ValVec* v, size_t n) {
  Heap* h = CurrentHeap();
  if (h && h->limit() > 0 &&
      static_cast<double>(v->size() + n) * sizeof(Val) >
          static_cast<double>(h->limit() - h->live())) {
    h->Exceeded();
  }
  constexpr size_t kMaxReserve = size_t{1} << 16;  // without a limit, grow past this
  v->reserve(v->size() + (h && h->limit() > 0 ? n : std::min(n, kMaxReserve)));
}

ValVec ToVector(const Val& coll) {
  ValVec out;
  // Reserved up front (the allocator charges it), so a collection that cannot fit fails
  // before it is walked.
  if (coll.is_coll()) ReserveValues(&out, Count(coll));
  ForEach(coll, [&](const Val& x) {
    out.push_back(x);
    return true;
  });
  return out;
}

}  // namespace mentat::script
