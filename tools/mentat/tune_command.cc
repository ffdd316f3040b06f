// .tune: value-index tuning (Store::tune_indexes; doc/performance.md "Value indexes").
#include "session.h"

namespace mentat::cli {

Status Session::Tune(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  bool dry = rest == "dry" || rest == "--dry-run" || rest == "--dry" || rest == "dry-run";
  if (!rest.empty() && !dry) {
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
    store_->set_auto_index(mode);
    store_options_.auto_index = mode;  // kept by .open
  }
  MENTAT_ASSIGN_OR_RETURN(auto actions, store_->tune_indexes(dry));
  for (const auto& a : actions) out_ << a.ToString() << "\n";
  if (actions.empty()) out_ << "no index changes\n";
  return Status::OK();
}

}  // namespace mentat::cli
