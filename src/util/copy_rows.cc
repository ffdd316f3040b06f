#include "util/copy_rows.h"

#include <cstdio>

namespace mentat {

void CopyRows::Sep() {
  if (!first_) data_.push_back('\t');
  first_ = false;
}

void CopyRows::Int(int64_t v) {
  Sep();
  data_ += std::to_string(v);
}

void CopyRows::Double(double v) {
  Sep();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  data_ += buf;
}

void CopyRows::Text(std::string_view v) {
  Sep();
  for (char ch : v) {
    switch (ch) {
      case '\\':
        data_.append("\\\\");
        break;
      case '\t':
        data_.append("\\t");
        break;
      case '\n':
        data_.append("\\n");
        break;
      case '\r':
        data_.append("\\r");
        break;
      default:
        data_.push_back(ch);
    }
  }
}

void CopyRows::Bytea(std::string_view v) {
  static const char kHex[] = "0123456789abcdef";
  Sep();
  data_.append("\\\\x");
  for (unsigned char b : v) {
    data_.push_back(kHex[b >> 4]);
    data_.push_back(kHex[b & 15]);
  }
}

void CopyRows::Null() {
  Sep();
  data_.append("\\N");
}

void CopyRows::EndRow() {
  data_.push_back('\n');
  ++rows_;
  first_ = true;
}

}  // namespace mentat
