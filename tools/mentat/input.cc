#include "input.h"

#include <algorithm>

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
      case '"':
        in_string = true;
        break;
      case ';':
        while (i < text.size() && text[i] != '\n') ++i;
        break;
      case '\\':
        ++i;
        break;  // a character literal such as \( or \"
      case '(':
      case '[':
      case '{':
        ++depth;
        break;
      case ')':
      case ']':
      case '}':
        --depth;
        break;
      default:
        break;
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
  while (!rest->empty() && (rest->back() == '\n' || rest->back() == '\r' || rest->back() == ' ' ||
                            rest->back() == '\t'))
    rest->pop_back();
}

bool LooksLikeQuery(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n,");
  if (i == std::string_view::npos || (text[i] != '[' && text[i] != '{')) return false;
  i = text.find_first_not_of(" \t\r\n,", i + 1);
  if (i == std::string_view::npos || text.compare(i, 5, ":find") != 0) return false;
  i += 5;
  return i == text.size() ||
         std::string_view(" \t\r\n,[]{}()").find(text[i]) != std::string_view::npos;
}

std::string FlattenForHistory(std::string_view text) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\' && i + 1 < text.size()) {
        out += c;
        out += text[++i];
        continue;
      }
      if (c == '"') in_string = false;
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else {
        out += c;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '\\' && i + 1 < text.size()) {  // a character literal
      out += c;
      out += text[++i];
      continue;
    } else if (c == ';') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    } else if (c == '\n' || c == '\r') {
      // Join the lines with one space, none next to a bracket.
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
      while (i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\t' ||
                                     text[i + 1] == '\r' || text[i + 1] == '\n'))
        ++i;
      bool closer = i + 1 < text.size() &&
                    std::string_view(")]}").find(text[i + 1]) != std::string_view::npos;
      bool opener =
          !out.empty() && std::string_view("([{").find(out.back()) != std::string_view::npos;
      if (!out.empty() && !closer && !opener) out += ' ';
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string CaretLines(std::string_view text, unsigned line, unsigned col) {
  if (line == 0 || col == 0) return "";
  size_t start = 0;
  for (unsigned l = 1; l < line; ++l) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return "";
    ++start;
  }
  if (start > text.size()) return "";
  size_t end = text.find('\n', start);
  std::string_view src = text.substr(start, end == std::string_view::npos ? end : end - start);
  if (!src.empty() && src.back() == '\r') src.remove_suffix(1);
  if (col > src.size() + 1) return "";
  std::string caret;
  for (size_t i = 0; i + 1 < col; ++i) {
    unsigned char c = src[i];
    if (c == '\t') {
      caret += '\t';
    } else if ((c & 0xC0) != 0x80) {
      caret += ' ';
    }
  }
  return "  " + std::string(src) + "\n  " + caret + "^";
}

namespace {

// Parses "L:C" at the start of `s`; returns the characters consumed (0 if none).
size_t ParseLineCol(std::string_view s, unsigned* line, unsigned* col) {
  size_t i = 0;
  auto number = [&](unsigned* out) {
    size_t start = i;
    unsigned v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 9) v = v * 10 + (s[i++] - '0');
    *out = v;
    return i > start;
  };
  if (!number(line) || i >= s.size() || s[i] != ':') return 0;
  ++i;
  if (!number(col)) return 0;
  return i;
}

}  // namespace

bool ErrorPosition(std::string_view message, unsigned* line, unsigned* col) {
  size_t n = ParseLineCol(message, line, col);
  if (n > 0 && n < message.size() && message[n] == ':') return *line > 0 && *col > 0;
  size_t at = message.rfind(" at ");
  if (at == std::string_view::npos) return false;
  std::string_view tail = message.substr(at + 4);
  n = ParseLineCol(tail, line, col);
  return n > 0 && n == tail.size() && *line > 0 && *col > 0;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    if (i >= text.size()) break;
    std::string w;
    if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        w += text[i];
      }
      ++i;
    } else {
      while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n')
        w += text[i++];
    }
    words.push_back(std::move(w));
  }
  return words;
}

}  // namespace mentat::cli
