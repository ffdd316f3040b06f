// Splitting CLI input into commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mentat::cli {

// True when every bracket opened in `text` (outside strings, characters and comments) is
// closed, i.e. the command can run. Unbalanced closers also count as complete (the
// command then fails with a parse error).
bool IsComplete(std::string_view text);

// Splits a command line into its name (".t") and the rest (leading spaces removed).
void SplitCommand(std::string_view line, std::string* name, std::string* rest);

}  // namespace mentat::cli
