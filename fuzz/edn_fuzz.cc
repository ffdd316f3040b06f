// Fuzz target: the EDN reader and printer.
//
// Invariants: a parse error is Code::kParse with "LINE:COL: " in front; whatever reads
// prints as text that reads back to a value that prints the same (print is a fixed
// point); the streaming Reader always makes progress.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "fuzz_store.h"
#include "mentat/edn.h"

namespace {

using mentat::Code;
namespace edn = mentat::edn;

void CheckError(const mentat::Status& st, std::string_view input) {
  if (st.code() != Code::kParse)
    mentat::fuzz::Fail("reader error is not a parse error: " + st.ToString());
  unsigned line = 0, col = 0;
  if (std::sscanf(st.message().c_str(), "%u:%u: ", &line, &col) != 2 || line == 0 || col == 0)
    mentat::fuzz::Fail("reader error without a position: " + st.ToString() + " for " +
                       std::string(input.substr(0, 80)));
}

void CheckRoundTrip(const edn::Value& v) {
  std::string printed = edn::Print(v);
  auto again = edn::Read(printed);
  if (!again.ok())
    mentat::fuzz::Fail("printed text does not read back: " + printed + " -> " +
                       again.status().ToString());
  std::string reprinted = edn::Print(*again);
  if (reprinted != printed)
    mentat::fuzz::Fail("print is not a fixed point: " + printed + " vs " + reprinted);
  if (!(v == *again) && printed.find("NaN") == std::string::npos)
    mentat::fuzz::Fail("value changed in a round trip: " + printed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool quote : {false, true}) {
    edn::ReadOptions options;
    options.allow_quote = quote;
    auto one = edn::Read(text, options);
    if (one.ok()) {
      CheckRoundTrip(*one);
    } else {
      CheckError(one.status(), text);
    }
    auto all = edn::ReadAll(text, options);
    if (all.ok()) {
      for (const auto& v : *all) CheckRoundTrip(v);
    } else {
      CheckError(all.status(), text);
    }
    edn::Reader reader(text, options);
    size_t forms = 0;
    for (;;) {
      size_t before = reader.offset();
      auto next = reader.Next();
      if (!next.ok()) {
        CheckError(next.status(), text);
        break;
      }
      if (!next->has_value()) break;
      if (reader.offset() <= before) mentat::fuzz::Fail("the streaming reader did not advance");
      if (++forms > size + 1) mentat::fuzz::Fail("the streaming reader loops");
    }
    if (all.ok() && forms != all->size())
      mentat::fuzz::Fail("Reader and ReadAll disagree on the number of forms");
  }
  return 0;
}
