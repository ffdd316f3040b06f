#include "input.h"

namespace mentat::cli {

bool IsComplete(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case ';':
        while (i < text.size() && text[i] != '\n') ++i;
        break;
      case '\\': ++i; break;  // a character literal such as \( or \"
      case '(':
      case '[':
      case '{': ++depth; break;
      case ')':
      case ']':
      case '}': --depth; break;
      default: break;
    }
  }
  return !in_string && depth <= 0;
}

void SplitCommand(std::string_view line, std::string* name, std::string* rest) {
  size_t b = line.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) {
    name->clear();
    rest->clear();
    return;
  }
  line.remove_prefix(b);
  size_t e = line.find_first_of(" \t\r\n");
  *name = std::string(line.substr(0, e));
  if (e == std::string_view::npos) {
    rest->clear();
    return;
  }
  std::string_view r = line.substr(e);
  size_t rb = r.find_first_not_of(" \t\r\n");
  *rest = rb == std::string_view::npos ? std::string() : std::string(r.substr(rb));
  while (!rest->empty() && (rest->back() == '\n' || rest->back() == '\r' || rest->back() == ' '))
    rest->pop_back();
}

}  // namespace mentat::cli
