// .cache / .uncache: attribute caches (Store::cache; doc/performance.md "Attribute caches").
#include <sstream>

#include "session.h"

namespace mentat::cli {

Status Session::Cache(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  std::istringstream in(rest);
  std::string attr, direction, extra;
  in >> attr >> direction >> extra;
  if (attr.empty()) {
    auto cached = store_->cached_attributes();
    for (const auto& a : cached) out_ << ":" << a << " forward\n";
    if (cached.empty()) out_ << "no cached attributes\n";
    return Status::OK();
  }
  CacheDirection dir = CacheDirection::kForward;
  if (direction == "reverse") {
    dir = CacheDirection::kReverse;
  } else if (direction == "both") {
    dir = CacheDirection::kBoth;
  } else if (!direction.empty() && direction != "forward") {
    return Status::InvalidArgument("usage: .cache [ATTR [forward|reverse|both]]");
  }
  if (!extra.empty()) return Status::InvalidArgument("usage: .cache [ATTR [forward|reverse|both]]");
  MENTAT_RETURN_IF_ERROR(store_->cache(attr, dir));
  out_ << "caching " << (attr[0] == ':' ? "" : ":") << attr << " forward\n";
  return Status::OK();
}

Status Session::Uncache(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  std::istringstream in(rest);
  std::string attr, extra;
  in >> attr >> extra;
  if (attr.empty() || !extra.empty()) return Status::InvalidArgument("usage: .uncache ATTR");
  MENTAT_RETURN_IF_ERROR(store_->uncache(attr));
  out_ << "no longer caching " << (attr[0] == ':' ? "" : ":") << attr << "\n";
  return Status::OK();
}

}  // namespace mentat::cli
