// The persistent vector: a 32-way trie of leaves plus a tail leaf (Clojure's
// PersistentVector). Updates copy the path from the root to the changed leaf.
#include "script/coll.h"

namespace mentat::script {

namespace {

constexpr size_t kWidth = 32;
constexpr int kBits = 5;

Ref<VLeaf> NewLeaf(size_t reserve) {
  Ref<VLeaf> leaf = Make<VLeaf>(reserve * sizeof(Val));
  leaf->v.reserve(reserve);
  return leaf;
}

Ref<VLeaf> CopyLeaf(const VLeaf* src, size_t extra) {
  Ref<VLeaf> leaf = NewLeaf(src->v.size() + extra);
  leaf->v = src->v;
  leaf->v.reserve(src->v.size() + extra);
  return leaf;
}

Ref<VBranch> NewBranch() { return Make<VBranch>(0); }

Ref<VBranch> CopyBranch(const VBranch* src) {
  Ref<VBranch> b = NewBranch();
  for (size_t i = 0; i < kWidth; ++i) b->kids[i] = src->kids[i];
  return b;
}

VecObj* V(const Val& v) { return v.as<VecObj>(); }

size_t TailOff(size_t cnt) { return cnt < kWidth ? 0 : ((cnt - 1) >> kBits) << kBits; }

const VLeaf* LeafFor(const VecObj* v, size_t i) {
  if (i >= TailOff(v->cnt)) return v->tail.get();
  const Obj* node = v->root.get();
  for (int level = v->shift; level > 0; level -= kBits) {
    node = static_cast<const VBranch*>(node)->kids[(i >> level) & (kWidth - 1)].get();
  }
  return static_cast<const VLeaf*>(node);
}

Ref<Obj> NewPath(int level, Ref<Obj> node) {
  if (level == 0) return node;
  Ref<VBranch> b = NewBranch();
  b->kids[0] = NewPath(level - kBits, std::move(node));
  return b;
}

// Appends the full tail leaf under `parent` (a copy of which is returned).
Ref<VBranch> PushTail(size_t cnt, int level, const VBranch* parent, Ref<Obj> tail) {
  size_t sub = ((cnt - 1) >> level) & (kWidth - 1);
  Ref<VBranch> ret = CopyBranch(parent);
  if (level == kBits) {
    ret->kids[sub] = std::move(tail);
  } else if (const Obj* child = parent->kids[sub].get()) {
    ret->kids[sub] =
        PushTail(cnt, level - kBits, static_cast<const VBranch*>(child), std::move(tail));
  } else {
    ret->kids[sub] = NewPath(level - kBits, std::move(tail));
  }
  return ret;
}

Ref<Obj> DoAssoc(int level, const Obj* node, size_t i, const Val& x) {
  if (level == 0) {
    Ref<VLeaf> leaf = CopyLeaf(static_cast<const VLeaf*>(node), 0);
    leaf->v[i & (kWidth - 1)] = x;
    return leaf;
  }
  const VBranch* b = static_cast<const VBranch*>(node);
  Ref<VBranch> ret = CopyBranch(b);
  size_t sub = (i >> level) & (kWidth - 1);
  ret->kids[sub] = DoAssoc(level - kBits, b->kids[sub].get(), i, x);
  return ret;
}

// Removes the last leaf; null when the branch becomes empty.
Ref<VBranch> PopTail(size_t cnt, int level, const VBranch* node) {
  size_t sub = ((cnt - 2) >> level) & (kWidth - 1);
  if (level > kBits) {
    Ref<VBranch> child =
        PopTail(cnt, level - kBits, static_cast<const VBranch*>(node->kids[sub].get()));
    if (!child && sub == 0) return Ref<VBranch>();
    Ref<VBranch> ret = CopyBranch(node);
    ret->kids[sub] = child;
    return ret;
  }
  if (sub == 0) return Ref<VBranch>();
  Ref<VBranch> ret = CopyBranch(node);
  ret->kids[sub] = Ref<Obj>();
  return ret;
}

Val Wrap(const Ref<VecObj>& v) { return Val::Object(Type::kVector, v.get()); }

}  // namespace

size_t VecCount(const Val& v) { return v.obj() ? V(v)->cnt : 0; }

const Val& VecNth(const Val& v, size_t i) { return LeafFor(V(v), i)->v[i & (kWidth - 1)]; }

Val VecConj(const Val& v, Val x) {
  CurrentMeter().Step();
  const VecObj* src = V(v);
  Ref<VecObj> out = Make<VecObj>(0);
  if (!src) {
    out->cnt = 1;
    out->tail = NewLeaf(1);
    out->tail->v.push_back(std::move(x));
    return Wrap(out);
  }
  out->cnt = src->cnt + 1;
  out->shift = src->shift;
  if (src->cnt - TailOff(src->cnt) < kWidth) {
    out->root = src->root;
    out->tail = CopyLeaf(src->tail.get(), 1);
    out->tail->v.push_back(std::move(x));
    return Wrap(out);
  }
  // The tail is full: push it into the trie.
  Ref<Obj> tail(src->tail);
  if (!src->root) {
    Ref<VBranch> root = NewBranch();
    root->kids[0] = tail;
    out->root = root;
  } else if ((src->cnt >> kBits) > (size_t{1} << src->shift)) {
    Ref<VBranch> root = NewBranch();
    root->kids[0] = src->root;
    root->kids[1] = NewPath(src->shift, tail);
    out->root = root;
    out->shift = src->shift + kBits;
  } else {
    out->root = PushTail(src->cnt, src->shift, src->root.get(), tail);
  }
  out->tail = NewLeaf(1);
  out->tail->v.push_back(std::move(x));
  return Wrap(out);
}

Val VecAssoc(const Val& v, size_t i, Val x) {
  CurrentMeter().Step();
  const VecObj* src = V(v);
  if (!src || i == src->cnt) return VecConj(v, std::move(x));
  Ref<VecObj> out = Make<VecObj>(0);
  out->cnt = src->cnt;
  out->shift = src->shift;
  if (i >= TailOff(src->cnt)) {
    out->root = src->root;
    out->tail = CopyLeaf(src->tail.get(), 0);
    out->tail->v[i & (kWidth - 1)] = std::move(x);
  } else {
    out->tail = src->tail;
    Ref<Obj> root = DoAssoc(src->shift, src->root.get(), i, x);
    out->root = Ref<VBranch>(static_cast<VBranch*>(root.get()));
  }
  return Wrap(out);
}

Val VecPop(const Val& v) {
  const VecObj* src = V(v);
  if (src->cnt == 1) return Val::EmptyVector();
  Ref<VecObj> out = Make<VecObj>(0);
  out->cnt = src->cnt - 1;
  out->shift = src->shift;
  if (src->cnt - TailOff(src->cnt) > 1) {
    out->root = src->root;
    out->tail = CopyLeaf(src->tail.get(), 0);
    out->tail->v.pop_back();
    return Wrap(out);
  }
  const VLeaf* new_tail = LeafFor(src, src->cnt - 2);
  out->tail = Ref<VLeaf>(const_cast<VLeaf*>(new_tail));
  Ref<VBranch> root = PopTail(src->cnt, src->shift, src->root.get());
  if (root && src->shift > kBits && !root->kids[1]) {
    root = Ref<VBranch>(static_cast<VBranch*>(root->kids[0].get()));
    out->shift -= kBits;
  }
  if (out->cnt <= kWidth) root = Ref<VBranch>();
  out->root = root;
  return Wrap(out);
}

void VecBuilder::Add(Val x) {
  CurrentMeter().Step();
  if (!cur_ || cur_->v.size() == kWidth) {
    if (cur_) leaves_.push_back(cur_);
    cur_ = NewLeaf(kWidth);
  }
  cur_->v.push_back(std::move(x));
  ++n_;
}

Val VecBuilder::Build() {
  if (n_ == 0) return Val::EmptyVector();
  Ref<VecObj> out = Make<VecObj>(0);
  out->cnt = n_;
  out->tail = cur_;
  if (!leaves_.empty()) {
    std::vector<Ref<Obj>> level = std::move(leaves_);
    int shift = kBits;
    for (;;) {
      std::vector<Ref<Obj>> up;
      for (size_t i = 0; i < level.size(); i += kWidth) {
        Ref<VBranch> b = NewBranch();
        for (size_t j = i; j < level.size() && j < i + kWidth; ++j) b->kids[j - i] = level[j];
        up.push_back(b);
      }
      if (up.size() == 1) {
        out->root = Ref<VBranch>(static_cast<VBranch*>(up[0].get()));
        break;
      }
      level = std::move(up);
      shift += kBits;
    }
    out->shift = shift;
  }
  leaves_.clear();
  cur_ = Ref<VLeaf>();
  n_ = 0;
  return Wrap(out);
}

Val VecFrom(ValVec items) {
  VecBuilder b;
  for (Val& x : items) b.Add(std::move(x));
  return b.Build();
}

Val Vec2(Val a, Val b) {
  Ref<VecObj> out = Make<VecObj>(0);
  out->cnt = 2;
  out->tail = NewLeaf(2);
  out->tail->v.push_back(std::move(a));
  out->tail->v.push_back(std::move(b));
  return Wrap(out);
}

}  // namespace mentat::script
