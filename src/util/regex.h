// Regular expressions for queries (re-find, re-matches, re-pattern) and scripts (re-find,
// re-matches, re-seq, clojure.string/split, replace): one engine and one syntax for both.
//
// The engine is RE2 (Debian's libre2): matching is linear in the subject's length and uses
// no recursion, so no pattern or subject can take exponential time or exhaust a stack,
// and a compiled pattern's memory is bounded (kMaxProgramBytes). The syntax is RE2's
// (https://github.com/google/re2/wiki/Syntax): Perl/Java-style classes, groups (named
// `(?P<name>...)`), non-greedy repetition and flags `(?i)`, `(?s)`,
// `(?m)`; not back-references or look-around, which have no linear-time algorithm (such
// patterns are refused when compiled, with the reason). Patterns and subjects are UTF-8;
// `.` and classes match code points.
//
// Thread safety: a compiled Regex is immutable and may be shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/status.h"

namespace mentat::regex {

// The memory one compiled pattern may use: its programs and the matcher's caches. A
// pattern whose program alone needs more fails to compile ("pattern too large").
inline constexpr int64_t kMaxProgramBytes = 1 << 20;

// A match: group 0 is the whole match, then each capturing group in order; a group that
// did not take part is nullopt. Views point into the subject.
struct Match {
  std::vector<std::optional<std::string_view>> groups;
  // Byte offsets of the whole match in the subject.
  size_t begin = 0;
  size_t end = 0;
};

class Regex {
 public:
  // Compiles `pattern`. Errors: kInvalidArgument "invalid regular expression "PATTERN":
  // REASON".
  static Result<std::shared_ptr<const Regex>> Compile(std::string_view pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  const std::string& pattern() const { return pattern_; }
  // Capturing groups (not counting group 0).
  int groups() const;
  // The number of the group named `name` ((?P<name>...)), or -1.
  int group_index(std::string_view name) const;
  // An estimate of the bytes this pattern may hold: what callers charge to a memory limit.
  int64_t footprint() const;

  // The leftmost match in `subject` at or after byte `from` (Perl's leftmost-first
  // semantics, as Java and Clojure); false when there is none.
  bool Find(std::string_view subject, size_t from, Match* m) const;
  // Whether the whole of `subject` matches.
  bool FullMatch(std::string_view subject, Match* m) const;

 private:
  Regex() = default;
  struct Impl;
  std::string pattern_;
  std::unique_ptr<Impl> impl_;
};

// Expands a Java-style replacement for `m` (clojure.string/replace with a string): `$0`..
// `$9` and `${name}` name groups (a group that did not take part adds nothing), `\x`
// adds x literally. Errors: kInvalidArgument for a reference to a group the pattern does
// not have, or a trailing `\` or `$`.
Result<std::string> ExpandReplacement(const Regex& re, const Match& m,
                                      std::string_view replacement);

}  // namespace mentat::regex
