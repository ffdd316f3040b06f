#include "csv.h"

namespace mentat::cli {

CsvReader::CsvReader(std::string_view text) : text_(text) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") off_ = 3;
}

Result<bool> CsvReader::Next(std::vector<std::string>* fields) {
  fields->clear();
  // Skip blank lines.
  while (off_ < text_.size() && (text_[off_] == '\n' || text_[off_] == '\r')) {
    if (text_[off_] == '\n') ++line_;
    ++off_;
  }
  if (off_ >= text_.size()) return false;
  record_line_ = line_;
  std::string field;
  for (;;) {
    if (off_ < text_.size() && text_[off_] == '"') {
      size_t quote_line = line_, quote_col = 1;
      for (size_t k = off_; k > 0 && text_[k - 1] != '\n'; --k) ++quote_col;
      ++off_;
      for (;;) {
        if (off_ >= text_.size())
          return Status::Parse(std::to_string(quote_line) + ":" + std::to_string(quote_col) +
                               ": unterminated quoted field");
        char c = text_[off_++];
        if (c == '"') {
          if (off_ < text_.size() && text_[off_] == '"') {
            field += '"';
            ++off_;
            continue;
          }
          break;
        }
        if (c == '\n') ++line_;
        field += c;
      }
      // Text after the closing quote up to the separator is kept, as most readers do.
    }
    while (off_ < text_.size() && text_[off_] != ',' && text_[off_] != '\n') {
      if (text_[off_] != '\r' || (off_ + 1 < text_.size() && text_[off_ + 1] != '\n'))
        field += text_[off_];
      ++off_;
    }
    fields->push_back(std::move(field));
    field.clear();
    if (off_ >= text_.size()) return true;
    if (text_[off_] == ',') {
      ++off_;
      continue;
    }
    ++off_;  // '\n'
    ++line_;
    return true;
  }
}

}  // namespace mentat::cli
