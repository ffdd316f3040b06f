#include "storage/table_prefix.h"

#include <cctype>

namespace mentat::storage {

namespace {

// Every schema object a store creates (format.cc): tables, their indexes, the FTS5 table
// (whose shadow tables SQLite names after it) and its content table.
constexpr std::string_view kNames[] = {"meta",
                                       "parts",
                                       "datoms",
                                       "history",
                                       "attr_stats",
                                       "attr_values",
                                       "auto_indexes",
                                       "fulltext",
                                       "fulltext_docs",
                                       "fulltext_docs_eav",
                                       "datoms_avet",
                                       "datoms_aevt",
                                       "datoms_tx",
                                       "history_avet",
                                       "history_tx",
                                       "history_rtx",
                                       "fulltext_docs_tsv"};

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// Copies the quoted token starting at sql[i] (quote `open`, closed by `close`, a doubled
// closing quote standing for one), renaming its content when it is a store object name.
size_t Quoted(std::string_view sql, size_t i, char close, std::string_view prefix,
              std::string* out) {
  size_t j = i + 1;
  std::string content;
  bool plain = true;  // no doubled quotes inside: the content is the raw text
  while (j < sql.size()) {
    if (sql[j] == close) {
      if (j + 1 < sql.size() && sql[j + 1] == close && close != ']') {
        plain = false;
        content += close;
        j += 2;
        continue;
      }
      break;
    }
    content += sql[j++];
  }
  size_t end = j < sql.size() ? j + 1 : j;  // past the closing quote (or the text's end)
  out->push_back(sql[i]);
  if (plain && j < sql.size() && IsStoreObjectName(content)) out->append(prefix);
  out->append(sql.substr(i + 1, end - i - 1));
  return end;
}

}  // namespace

bool IsStoreObjectName(std::string_view name) {
  for (std::string_view n : kNames) {
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t k = 0; k < n.size() && same; ++k)
      same = std::tolower(static_cast<unsigned char>(name[k])) == n[k];
    if (same) return true;
  }
  return false;
}

std::string PrefixTables(std::string_view sql, std::string_view prefix) {
  std::string out;
  out.reserve(sql.size() + 64);
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      size_t end = sql.find('\n', i);
      end = end == std::string_view::npos ? sql.size() : end;
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t end = sql.find("*/", i + 2);
      end = end == std::string_view::npos ? sql.size() : end + 2;
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '\'' || c == '"' || c == '`') {
      i = Quoted(sql, i, c, prefix, &out);
    } else if (c == '[') {
      i = Quoted(sql, i, ']', prefix, &out);
    } else if (IdentStart(c)) {
      size_t j = i + 1;
      while (j < sql.size() && IdentChar(sql[j])) ++j;
      std::string_view word = sql.substr(i, j - i);
      if (IsStoreObjectName(word)) out.append(prefix);
      out.append(word);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < sql.size() && (IdentChar(sql[j]) || sql[j] == '.')) ++j;
      out.append(sql.substr(i, j - i));
      i = j;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

}  // namespace mentat::storage
