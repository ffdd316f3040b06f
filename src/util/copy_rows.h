// Rows in PostgreSQL's COPY text format (pg::Connection::CopyIn, storage::Connection::CopyIn).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mentat {

// Rows for CopyIn in COPY's text format: fields separated by tabs, escaped
// (backslash, tab, newline, carriage return), NULL as \N, bytea as \\x and hex digits.
class CopyRows {
 public:
  void Int(int64_t v);
  void Double(double v);
  void Text(std::string_view v);
  void Bytea(std::string_view v);
  void Null();
  void EndRow();
  const std::string& data() const { return data_; }
  size_t rows() const { return rows_; }
  void Clear() {
    data_.clear();
    rows_ = 0;
    first_ = true;
  }

 private:
  void Sep();
  std::string data_;
  size_t rows_ = 0;
  bool first_ = true;
};

}  // namespace mentat
