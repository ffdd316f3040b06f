// Persistent treaps for maps and sets: ordered by Compare(), heap-ordered by the key's
// hash, so the shape depends only on the keys and the expected depth is O(log n).
#include "script/coll.h"

namespace mentat::script {

namespace {

void Fix(TNode* n) { n->size = 1 + TreeSize(n->left.get()) + TreeSize(n->right.get()); }

Ref<TNode> Copy(const TNode* src) {
  Ref<TNode> n = Make<TNode>(0);
  n->key = src->key;
  n->val = src->val;
  n->left = src->left;
  n->right = src->right;
  n->size = src->size;
  n->prio = src->prio;
  return n;
}

Ref<TNode> Leaf(const Val& key, const Val& val, uint64_t prio) {
  Ref<TNode> n = Make<TNode>(0);
  n->key = key;
  n->val = val;
  n->prio = prio;
  return n;
}

Ref<TNode> Insert(const TNode* t, const Val& key, const Val& val, uint64_t prio) {
  if (!t) return Leaf(key, val, prio);
  int c = Compare(key, t->key);
  if (c == 0) {  // an equal key keeps the original key object, as in Clojure
    Ref<TNode> n = Copy(t);
    n->val = val;
    return n;
  }
  Ref<TNode> n = Copy(t);
  if (c < 0) {
    Ref<TNode> child = Insert(t->left.get(), key, val, prio);
    if (child->prio > n->prio) {  // rotate right: child becomes the root
      n->left = child->right;
      Fix(n.get());
      child->right = n;
      Fix(child.get());
      return child;
    }
    n->left = child;
  } else {
    Ref<TNode> child = Insert(t->right.get(), key, val, prio);
    if (child->prio > n->prio) {  // rotate left
      n->right = child->left;
      Fix(n.get());
      child->left = n;
      Fix(child.get());
      return child;
    }
    n->right = child;
  }
  Fix(n.get());
  return n;
}

// Joins two treaps where every key of `a` is below every key of `b`.
Ref<TNode> Merge(const Ref<TNode>& a, const Ref<TNode>& b) {
  if (!a) return b;
  if (!b) return a;
  if (a->prio >= b->prio) {
    Ref<TNode> n = Copy(a.get());
    n->right = Merge(a->right, b);
    Fix(n.get());
    return n;
  }
  Ref<TNode> n = Copy(b.get());
  n->left = Merge(a, b->left);
  Fix(n.get());
  return n;
}

// Null result with *found false means "unchanged".
Ref<TNode> Remove(const TNode* t, const Val& key, bool* found) {
  if (!t) return Ref<TNode>();
  int c = Compare(key, t->key);
  if (c == 0) {
    *found = true;
    return Merge(t->left, t->right);
  }
  Ref<TNode> child = Remove(c < 0 ? t->left.get() : t->right.get(), key, found);
  if (!*found) return Ref<TNode>();
  Ref<TNode> n = Copy(t);
  (c < 0 ? n->left : n->right) = child;
  Fix(n.get());
  return n;
}

}  // namespace

TNode* TreeFind(TNode* t, const Val& key) {
  while (t) {
    int c = Compare(key, t->key);
    if (c == 0) return t;
    t = c < 0 ? t->left.get() : t->right.get();
  }
  return nullptr;
}

Ref<TNode> TreeAssoc(TNode* root, const Val& key, const Val& val) {
  CurrentMeter().Step();
  return Insert(root, key, val, Hash(key));
}

Ref<TNode> TreeDissoc(TNode* root, const Val& key) {
  CurrentMeter().Step();
  bool found = false;
  Ref<TNode> out = Remove(root, key, &found);
  return found ? out : Ref<TNode>(root);
}

TNode* TreeNth(TNode* t, size_t i) {
  while (t) {
    size_t left = TreeSize(t->left.get());
    if (i < left) {
      t = t->left.get();
    } else if (i == left) {
      return t;
    } else {
      i -= left + 1;
      t = t->right.get();
    }
  }
  return nullptr;
}

bool TreeForEach(TNode* root, const std::function<bool(TNode*)>& f) {
  Meter& m = CurrentMeter();
  TreeCursor c(root);
  while (TNode* t = c.Next()) {
    m.Step();
    if (!f(t)) return false;
  }
  return true;
}

Val MapAssoc(const Val& map, const Val& k, const Val& v) {
  TNode* root = map.as<TNode>();
  if (TNode* hit = TreeFind(root, k);
      hit && hit->val.type() == v.type() && v.heap() && hit->val.obj() == v.obj()) {
    return map;
  }
  Ref<TNode> out = TreeAssoc(root, k, v);
  return Val::Object(Type::kMap, out.get());
}

Val MapDissoc(const Val& map, const Val& k) {
  Ref<TNode> out = TreeDissoc(map.as<TNode>(), k);
  return Val::Object(Type::kMap, out.get());
}

Val SetConj(const Val& set, const Val& x) {
  TNode* root = set.as<TNode>();
  if (TreeFind(root, x)) return set;
  Ref<TNode> out = TreeAssoc(root, x, Val());
  return Val::Object(Type::kSet, out.get());
}

Val SetDisj(const Val& set, const Val& x) {
  Ref<TNode> out = TreeDissoc(set.as<TNode>(), x);
  return Val::Object(Type::kSet, out.get());
}

const Val* MapFind(const Val& map, const Val& k) {
  TNode* hit = TreeFind(map.as<TNode>(), k);
  return hit ? &hit->val : nullptr;
}

void MapBuilder::Add(const Val& k, const Val& v) { root_ = TreeAssoc(root_.get(), k, v); }

}  // namespace mentat::script
