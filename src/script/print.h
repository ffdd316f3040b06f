// Printing script values: pr (readable EDN) and print (strings and characters raw).
#pragma once

#include <string>

#include "script/value.h"

namespace mentat::script {

// Appends the printed form of `v`. `readably`: strings quoted and escaped, characters as
// \c (pr, pr-str, prn); otherwise raw (print, println, str of collections' contents).
// Opaque values print as tagged forms: #mentat/fn "name", #mentat/atom VALUE,
// #error {:message ... :data ...}, #mentat/regex "...", and the db and connection forms.
// Charges like TextBuf: printing past the memory limit, or a long (range), fails with a
// LimitError.
void PrintVal(const Val& v, bool readably, TextBuf* out);
std::string PrStr(const Val& v);
// The printed form for an error message: at most kBriefBytes bytes (then "..."), and only
// as much of `v` is walked, so a message about a huge value stays cheap.
constexpr size_t kBriefBytes = 1000;
std::string PrBrief(const Val& v);
// Clojure's str of one value: nil is "", strings and characters raw, others as pr.
void StrAppend(const Val& v, TextBuf* out);

}  // namespace mentat::script
