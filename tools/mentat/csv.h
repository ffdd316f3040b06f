// A streaming CSV reader (RFC 4180): comma-separated fields, double-quoted fields may
// hold commas, newlines and doubled quotes; CRLF or LF line ends; a UTF-8 byte order
// mark is skipped; blank lines are skipped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/status.h"

namespace mentat::cli {

class CsvReader {
 public:
  // `text` must outlive the reader.
  explicit CsvReader(std::string_view text);

  // Reads the next record into `*fields`: true, or false at the end of the input. An
  // unterminated quoted field is a kParse error "LINE:COL: ...".
  Result<bool> Next(std::vector<std::string>* fields);
  // Byte offset of the next unread character.
  size_t offset() const { return off_; }
  // The 1-based line on which the last record returned by Next() started.
  size_t record_line() const { return record_line_; }

 private:
  std::string_view text_;
  size_t off_ = 0;
  size_t line_ = 1;
  size_t record_line_ = 0;
};

}  // namespace mentat::cli
