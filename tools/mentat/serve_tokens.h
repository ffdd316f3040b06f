// The bearer tokens of `mentat serve --tokens FILE`: one per line, `TOKEN [MODE]` with
// MODE read-write (rw, the default) or read-only (ro); blank lines and lines starting with
// '#' are ignored.
#pragma once

#include <string>
#include <vector>

#include "mentat/status.h"

namespace mentat::cli {

enum class TokenAccess { kNone, kReadOnly, kReadWrite };

class Tokens {
 public:
  // Errors: kNotFound for a file that cannot be read; kInvalidArgument naming FILE:LINE
  // for a bad line, and for a file without tokens.
  static Result<Tokens> Load(const std::string& path);
  static Result<Tokens> Parse(const std::string& text, const std::string& path);
  // The access `token` grants (kNone for an unknown token). Compares in time independent
  // of where a guess first differs.
  TokenAccess Find(const std::string& token) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::pair<std::string, TokenAccess>> tokens_;
};

}  // namespace mentat::cli
