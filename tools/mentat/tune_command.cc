// .tune: value-index tuning through Store::tune_indexes (see tune.h).
#include "session.h"
#include "tune.h"

namespace mentat::cli {

Status Session::Tune(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  bool dry = rest == "dry" || rest == "--dry-run" || rest == "--dry" || rest == "dry-run";
  if (rest.empty() || dry) return TuneIndexes(*store_, dry, out_);
  AutoIndex mode;
  if (rest == "adaptive") {
    mode = AutoIndex::kAdaptive;
  } else if (rest == "schema") {
    mode = AutoIndex::kSchema;
  } else if (rest == "off") {
    mode = AutoIndex::kOff;
  } else {
    return Status::InvalidArgument("usage: .tune [dry|adaptive|schema|off]");
  }
  MENTAT_RETURN_IF_ERROR(SetAutoIndexMode(*store_, mode, [&]() -> Status {
    if (path_.empty())
      return Status::InvalidArgument(
          "the index mode of an in-memory store is set when it opens "
          "(MENTAT_AUTO_INDEX)");
    Options previous = store_options_;
    store_options_.auto_index = mode;
    Status st = Open(path_);
    if (!st.ok()) store_options_ = previous;
    return st;
  }));
  store_options_.auto_index = mode;
  return TuneIndexes(*store_, false, out_);
}

}  // namespace mentat::cli
