#include "util/regex.h"

#include <re2/re2.h>

namespace mentat::regex {

struct Regex::Impl {
  explicit Impl(std::string_view pattern, const RE2::Options& o)
      : re(re2::StringPiece(pattern.data(), pattern.size()), o) {}
  RE2 re;
};

namespace {

RE2::Options MakeOptions() {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingUTF8);
  o.set_log_errors(false);  // errors are returned, never written to the host's stderr
  o.set_max_mem(kMaxProgramBytes);
  return o;
}

bool Run(const RE2& re, std::string_view subject, size_t from, RE2::Anchor anchor, Match* m) {
  const int n = re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> parts(static_cast<size_t>(n));
  re2::StringPiece text(subject.data(), subject.size());
  if (from > subject.size()) return false;
  if (!re.Match(text, from, subject.size(), anchor, parts.data(), n)) return false;
  m->groups.clear();
  m->groups.reserve(parts.size());
  for (const auto& p : parts) {
    if (p.data() == nullptr) {
      m->groups.emplace_back(std::nullopt);
    } else {
      m->groups.emplace_back(std::string_view(p.data(), p.size()));
    }
  }
  m->begin = static_cast<size_t>(parts[0].data() - subject.data());
  m->end = m->begin + parts[0].size();
  return true;
}

}  // namespace

Result<std::shared_ptr<const Regex>> Regex::Compile(std::string_view pattern) {
  static const RE2::Options options = MakeOptions();
  std::shared_ptr<Regex> r(new Regex());
  r->pattern_.assign(pattern);
  r->impl_ = std::make_unique<Impl>(pattern, options);
  if (!r->impl_->re.ok()) {
    std::string why = r->impl_->re.error();
    const std::string& arg = r->impl_->re.error_arg();
    if (!arg.empty() && why.find(arg) == std::string::npos) why += ": " + arg;
    if (r->impl_->re.error_code() == RE2::ErrorPatternTooLarge)
      why += " (a compiled pattern may use at most " + std::to_string(kMaxProgramBytes >> 10) +
             " KiB)";
    if (arg.rfind("(?=", 0) == 0 || arg.rfind("(?!", 0) == 0 || arg.rfind("(?<", 0) == 0)
      why += " (look-around is not supported: matching is linear-time)";
    if (arg.size() == 2 && arg[0] == '\\' && arg[1] >= '1' && arg[1] <= '9')
      why += " (back-references are not supported: matching is linear-time)";
    return Status::InvalidArgument("invalid regular expression \"" + std::string(pattern) +
                                   "\": " + why);
  }
  return std::shared_ptr<const Regex>(std::move(r));
}

Regex::~Regex() = default;

int Regex::groups() const { return impl_->re.NumberOfCapturingGroups(); }

int Regex::group_index(std::string_view name) const {
  const auto& named = impl_->re.NamedCapturingGroups();
  auto it = named.find(std::string(name));
  return it == named.end() ? -1 : it->second;
}

int64_t Regex::footprint() const {
  // The program (about 16 bytes an instruction, forward and reverse), the pattern, and the
  // lazily built matcher caches, which RE2 keeps within max_mem.
  return static_cast<int64_t>(pattern_.size()) + 32 * impl_->re.ProgramSize() +
         kMaxProgramBytes / 4;
}

bool Regex::Find(std::string_view subject, size_t from, Match* m) const {
  return Run(impl_->re, subject, from, RE2::UNANCHORED, m);
}

bool Regex::FullMatch(std::string_view subject, Match* m) const {
  return Run(impl_->re, subject, 0, RE2::ANCHOR_BOTH, m);
}

Result<std::string> ExpandReplacement(const Regex& re, const Match& m,
                                      std::string_view replacement) {
  std::string out;
  const size_t groups = m.groups.size();
  auto add_group = [&](size_t g) {
    if (g < groups && m.groups[g]) out.append(*m.groups[g]);
  };
  for (size_t i = 0; i < replacement.size(); ++i) {
    char c = replacement[i];
    if (c == '\\') {
      if (i + 1 == replacement.size())
        return Status::InvalidArgument("replacement \"" + std::string(replacement) +
                                       "\" ends with a lone \\");
      out.push_back(replacement[++i]);
      continue;
    }
    if (c != '$') {
      out.push_back(c);
      continue;
    }
    if (i + 1 == replacement.size())
      return Status::InvalidArgument("replacement \"" + std::string(replacement) +
                                     "\" ends with a lone $");
    char d = replacement[i + 1];
    if (d == '{') {
      size_t close = replacement.find('}', i + 2);
      if (close == std::string_view::npos)
        return Status::InvalidArgument("replacement \"" + std::string(replacement) +
                                       "\": unterminated ${name}");
      std::string name(replacement.substr(i + 2, close - i - 2));
      int g = re.group_index(name);
      if (g < 0)
        return Status::InvalidArgument("replacement \"" + std::string(replacement) +
                                       "\": no group named " + name + " in " + re.pattern());
      add_group(static_cast<size_t>(g));
      i = close;
      continue;
    }
    if (d < '0' || d > '9')
      return Status::InvalidArgument("replacement \"" + std::string(replacement) +
                                     "\": $ must be followed by a group number or {name}");
    // As Java: the longest run of digits that still names a group of the pattern.
    size_t g = static_cast<size_t>(d - '0');
    if (g >= groups)
      return Status::InvalidArgument("replacement \"" + std::string(replacement) + "\": no group " +
                                     std::to_string(g) + " in " + re.pattern());
    size_t j = i + 2;
    while (j < replacement.size() && replacement[j] >= '0' && replacement[j] <= '9') {
      size_t more = g * 10 + static_cast<size_t>(replacement[j] - '0');
      if (more >= groups) break;
      g = more;
      ++j;
    }
    add_group(g);
    i = j - 1;
  }
  return out;
}

}  // namespace mentat::regex
