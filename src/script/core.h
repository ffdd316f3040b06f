// The core library: builtins registered into an Interp. One registration function per
// file (core_math.cc, core_coll.cc, core_seq.cc, core_string.cc, core_misc.cc).
#pragma once

#include <string>
#include <vector>

#include "script/coll.h"
#include "script/eval.h"

namespace mentat::script {

void RegisterMath(Interp& in);
void RegisterColl(Interp& in);
void RegisterSeq(Interp& in);
void RegisterString(Interp& in);
void RegisterMisc(Interp& in);
// mentat.store/* (store_fns.cc).
void RegisterStore(Interp& in);

inline void RegisterCore(Interp& in) {
  RegisterMath(in);
  RegisterColl(in);
  RegisterSeq(in);
  RegisterString(in);
  RegisterMisc(in);
  RegisterStore(in);
}

// Clojure's compare: numbers numerically, nil first, vectors by length then elements;
// fails for values of unrelated kinds.
int ClojureCompare(const Val& a, const Val& b);

// Applies a comparator: a function returning a number (compare) or a boolean (<).
int CompareWith(Interp& in, const Val& cmp, const Val& a, const Val& b);

// A stable merge sort that stays memory-safe whatever the comparator returns.
void SortVals(std::vector<Val>* v, const std::function<int(const Val&, const Val&)>& cmp);

// All elements of a seqable, charging one step per element.
std::vector<Val> Elements(Interp& in, const Val& coll);

// A native function value closing over `data`.
Val NativeClosure(const char* name, NativeFn fn, std::vector<Val> data);

}  // namespace mentat::script
