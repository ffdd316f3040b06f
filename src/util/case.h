// Unicode case mapping for queries (upper-case, lower-case) and scripts
// (clojure.string/upper-case, lower-case, capitalize): one implementation for both.
//
// Full mappings of the Unicode standard in the root locale, through ICU (Debian's
// libicu): "straße" upper-cases to "STRASSE", "ΣΑΣ" lower-cases with a final sigma
// ("σας"), as Java's String.toUpperCase/toLowerCase do for Clojure. ASCII-only text takes
// a fast path with the same result. Input is UTF-8; an ill-formed sequence becomes
// U+FFFD in the output (mentat's strings are well-formed: the EDN reader checks them).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace mentat::text {

std::string UpperCase(std::string_view s);
std::string LowerCase(std::string_view s);
// The first code point upper-cased and the rest lower-cased (Clojure's capitalize).
std::string Capitalize(std::string_view s);

}  // namespace mentat::text
