// Splitting CLI input into commands, and small text helpers for error messages and
// history.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mentat::cli {

// True when every bracket opened in `text` (outside strings, characters and comments) is
// closed, i.e. the command can run. Unbalanced closers also count as complete (the
// command then fails with a parse error).
bool IsComplete(std::string_view text);

// Splits a command line into its name (".t") and the rest (leading and trailing
// whitespace removed).
void SplitCommand(std::string_view line, std::string* name, std::string* rest);

// True when `text` is a bare query: an EDN vector or map whose first key is :find.
bool LooksLikeQuery(std::string_view text);

// `text` on one line, with the same meaning as EDN: newlines inside strings become "\n"
// escapes, comments are dropped, other newlines become spaces. For the history file,
// which stores one entry per line.
std::string FlattenForHistory(std::string_view text);

// The 1-based `line` of `text` and a caret under `col`, each line indented by two
// spaces: "  [:find ?x :wher]\n            ^". Empty when the position is outside `text`.
std::string CaretLines(std::string_view text, unsigned line, unsigned col);

// The position an error message points at: a "LINE:COL: " prefix, or a trailing
// " at LINE:COL". False when the message has neither.
bool ErrorPosition(std::string_view message, unsigned* line, unsigned* col);

// Levenshtein distance, for "did you mean" hints.
size_t EditDistance(std::string_view a, std::string_view b);

// Splits a line into words: whitespace separates, double quotes group ("my file.edn").
std::vector<std::string> SplitWords(std::string_view text);

}  // namespace mentat::cli
