// The core library: builtins registered into an Interp. One registration function per
// file (core_math.cc, core_coll.cc, core_seq.cc, core_string.cc, core_misc.cc).
//
// Metering: a builtin must charge steps for the work it does and memory for what it
// allocates, or a script escapes its limits. Most of it happens below the builtins:
// ForEach, ToVector, Equal, Compare, Hash, the printer and the converters charge a step
// per element they walk; Cons, the vector and map builders a step per element they add;
// Val::Text and TextBuf a step per kBytesPerStep bytes of text; Make, ValVec (Charged)
// and TextBuf charge the heap before or as they allocate. A builtin that loops or
// allocates by other means charges itself (Interp::Steps, CurrentMeter(), ScopedCharge).
// metering_test.cc walks every registered builtin with worst-case arguments.
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

// A stable merge sort that stays memory-safe whatever the comparator returns; a step per
// element per pass.
void SortVals(ValVec* v, const std::function<int(const Val&, const Val&)>& cmp);

// All elements of a seqable, charging one step per element (ToVector).
ValVec Elements(Interp& in, const Val& coll);

// A native function value closing over `data`.
Val NativeClosure(const char* name, NativeFn fn, ValVec data);

}  // namespace mentat::script
