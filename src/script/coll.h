// Persistent collections and the sequence operations over them.
//
// Vectors are 32-way tries with a tail (Clojure's PersistentVector): O(log32 n) nth,
// conj, assoc and pop. Maps and sets are treaps ordered by Compare() whose priorities are
// the key hashes, so a set of keys has one shape and iteration is always in key order
// (printing is deterministic). Every update copies only the path it changes. A null
// object is the empty collection. Sequence functions (first, rest, seq ...) accept nil,
// lists, seqs, vectors, maps, sets and strings, as in Clojure.
#pragma once

#include <functional>

#include "script/value.h"

namespace mentat::script {

// ---- Vector ----

struct VLeaf : Obj {
  std::vector<Val> v;  // up to 32 values
};
struct VBranch : Obj {
  Ref<Obj> kids[32];  // VBranch or VLeaf children
};
struct VecObj : Obj {
  size_t cnt = 0;
  int shift = 5;
  Ref<VBranch> root;  // null while everything fits in the tail
  Ref<VLeaf> tail;
};

Val VecFrom(ValVec items);
Val Vec2(Val a, Val b);
size_t VecCount(const Val& v);
const Val& VecNth(const Val& v, size_t i);  // REQUIRES: i < count
// Adding an element (VecConj, VecAssoc, VecBuilder::Add, TreeAssoc, Cons ...) costs a step.
Val VecConj(const Val& v, Val x);
Val VecAssoc(const Val& v, size_t i, Val x);  // REQUIRES: i <= count
Val VecPop(const Val& v);                     // REQUIRES: count > 0

// Builds a vector by appending; O(1) amortized per element.
class VecBuilder {
 public:
  void Add(Val x);
  size_t size() const { return n_; }
  Val Build();

 private:
  std::vector<Ref<Obj>> leaves_;
  Ref<VLeaf> cur_;
  size_t n_ = 0;
};

// ---- Maps and sets (treaps) ----

struct TNode : Obj {
  Val key;
  Val val;
  Ref<TNode> left;
  Ref<TNode> right;
  size_t size = 1;
  uint64_t prio = 0;
};

TNode* TreeFind(TNode* root, const Val& key);
Ref<TNode> TreeAssoc(TNode* root, const Val& key, const Val& val);
Ref<TNode> TreeDissoc(TNode* root, const Val& key);
TNode* TreeNth(TNode* root, size_t i);  // REQUIRES: i < size
inline size_t TreeSize(const TNode* t) { return t ? t->size : 0; }
// In-order traversal, a step per node; `f` returns false to stop. Returns false when
// stopped.
bool TreeForEach(TNode* root, const std::function<bool(TNode*)>& f);

// In-order iteration (charges no steps; callers do), holding O(depth) state.
class TreeCursor {
 public:
  explicit TreeCursor(TNode* root) { Descend(root); }
  // The next node, or nullptr at the end.
  TNode* Next() {
    if (stack_.empty()) return nullptr;
    TNode* t = stack_.back();
    stack_.pop_back();
    Descend(t->right.get());
    return t;
  }

 private:
  void Descend(TNode* t) {
    for (; t; t = t->left.get()) stack_.push_back(t);
  }
  std::vector<TNode*> stack_;
};

Val MapAssoc(const Val& map, const Val& k, const Val& v);
Val MapDissoc(const Val& map, const Val& k);
Val SetConj(const Val& set, const Val& x);
Val SetDisj(const Val& set, const Val& x);
// nullptr when absent.
const Val* MapFind(const Val& map, const Val& k);

// Builds a map or a set.
class MapBuilder {
 public:
  explicit MapBuilder(bool set = false) : set_(set) {}
  void Add(const Val& k, const Val& v);
  void Add(const Val& k) { Add(k, Val()); }
  Val Build() const { return Val::Object(set_ ? Type::kSet : Type::kMap, root_.get()); }

 private:
  bool set_;
  Ref<TNode> root_;
};

// ---- Sequences ----

enum class SeqKind : uint8_t { kVec, kTree, kStr, kRange };

struct SeqView : SeqObj {
  SeqKind kind = SeqKind::kVec;
  Val Rest() const override;
  Val First() const override;
  size_t Count() const override;
  Val src;                      // the vector, map, set or string
  size_t i = 0;                 // element index (kVec, kTree), byte offset (kStr)
  size_t n = 0;                 // elements left (kStr, kRange)
  int64_t start = 0, step = 1;  // kRange
};

Val RangeSeq(int64_t start, int64_t step, size_t n);

// Element count (strings count code points). Fails for non-collections.
size_t Count(const Val& coll);
// nil or a non-empty seq (list or seq view).
Val Seq(const Val& coll);
Val First(const Val& coll);
Val Rest(const Val& coll);  // () at the end
Val Next(const Val& coll);  // nil at the end
// nth; `not_found` null means an out-of-range index fails.
Val Nth(const Val& coll, int64_t i, const Val* not_found);
Val Get(const Val& coll, const Val& key, const Val& not_found = Val());
bool Contains(const Val& coll, const Val& key);
Val Conj(const Val& coll, const Val& x);
Val Assoc(const Val& coll, const Val& k, const Val& v);

// Visits every element of a seqable (map elements are [k v] vectors), charging a step
// per element to the current meter (so a walk over (range) stops at the step limit or an
// interrupt); `f` returns false to stop. Returns false when stopped.
bool ForEach(const Val& coll, const std::function<bool(const Val&)>& f);
// Map entries without allocating entry vectors (a step per entry).
bool ForEachEntry(const Val& map, const std::function<bool(const Val&, const Val&)>& f);
// All elements, in order (a step per element; the buffer is charged to the heap, and a
// collection too large for what is left of the memory limit fails before it is read).
ValVec ToVector(const Val& coll);
// Reserves room for `n` more values in `v`; fails (LimitError) up front when they cannot
// fit in what is left of the memory limit.
void ReserveValues(ValVec* v, size_t n);
// True for values ForEach accepts.
bool Seqable(const Val& v);

// Decodes one UTF-8 code point at `*off` and advances it (invalid bytes decode as
// U+FFFD, one byte at a time).
char32_t DecodeUtf8(std::string_view s, size_t* off);
void AppendUtf8(char32_t c, std::string* out);
// Charges the text it scans to the current meter.
size_t CountCodePoints(std::string_view s);

// ---- Equality, ordering, hashing ----

// Equal, Compare and Hash charge the current meter a step per element pair (or element)
// of the collections they walk and for the text they scan, so comparing or hashing a
// (range) stops at the step limit or an interrupt.
//
// Clojure's =: 1 != 1.0; lists, seqs and vectors with equal elements are equal.
bool Equal(const Val& a, const Val& b);
// A total order consistent with Equal (Compare(a, b) == 0 exactly when Equal(a, b)):
// kinds by rank (as edn::Compare), numbers numerically (ints before equal floats),
// sequential collections elementwise.
int Compare(const Val& a, const Val& b);
uint64_t Hash(const Val& v);

}  // namespace mentat::script
