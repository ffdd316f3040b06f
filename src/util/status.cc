#include "mentat/status.h"

namespace mentat {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kParse:
      return "parse error";
    case Code::kNotFound:
      return "not found";
    case Code::kSchema:
      return "schema error";
    case Code::kConflict:
      return "conflict";
    case Code::kCasMismatch:
      return "cas mismatch";
    case Code::kBusy:
      return "busy";
    case Code::kInterrupted:
      return "interrupted";
    case Code::kIo:
      return "i/o error";
    case Code::kCorrupt:
      return "corrupt";
    case Code::kUnsupported:
      return "unsupported";
    case Code::kInternal:
      return "internal error";
  }
  return "unknown";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(rep_->code)) + ": " + rep_->message;
}

}  // namespace mentat

namespace mentat {

void ResultValueOnError(const Status& status) {
  std::fprintf(stderr, "mentat: Result::value() on an error: %s\n", status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace mentat
