#include "serve_tokens.h"

#include <fstream>
#include <sstream>

namespace mentat::cli {

namespace {

bool SameToken(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i)
    diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ b[i]);
  return diff == 0;
}

}  // namespace

Result<Tokens> Tokens::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the tokens file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

Result<Tokens> Tokens::Parse(const std::string& text, const std::string& path) {
  Tokens t;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    std::istringstream words(line);
    std::string token, mode, extra;
    words >> token;
    if (token.empty() || token[0] == '#') continue;
    words >> mode >> extra;
    std::string where = path + ":" + std::to_string(n) + ": ";
    if (!extra.empty())
      return Status::InvalidArgument(where + "expected TOKEN [read-write|read-only], found '" +
                                     extra + "' after the mode");
    TokenAccess access = TokenAccess::kReadWrite;
    if (mode == "read-only" || mode == "ro") {
      access = TokenAccess::kReadOnly;
    } else if (!mode.empty() && mode != "read-write" && mode != "rw") {
      return Status::InvalidArgument(where + "unknown mode '" + mode +
                                     "' (expected read-write or read-only)");
    }
    if (token.size() < 8)
      return Status::InvalidArgument(where + "a token needs at least 8 characters");
    t.tokens_.emplace_back(token, access);
  }
  if (t.tokens_.empty()) return Status::InvalidArgument(path + ": no tokens");
  return t;
}

TokenAccess Tokens::Find(const std::string& token) const {
  TokenAccess found = TokenAccess::kNone;
  for (const auto& [t, access] : tokens_)
    if (SameToken(token, t)) found = access;
  return found;
}

}  // namespace mentat::cli
