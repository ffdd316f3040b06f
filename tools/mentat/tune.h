// Index tuning for .tune, written against the API DESIGN.md describes
// (`Store::tune_indexes(dry_run)` returning the planned create/drop actions, and the
// AutoIndex modes) but compiled only when the store has it: the shell builds before and
// after the performance work lands; until then (doc/performance.md explains why it has not
// been built) .tune says "not available".
// Templates, so that a missing member is not an error; tested with stand-in stores.
#pragma once

#include <concepts>
#include <functional>
#include <ostream>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>

#include "mentat/store.h"

namespace mentat::cli {

inline constexpr const char* kTuneUnavailable =
    "not available: this build of mentat does not tune indexes (datoms_avet already indexes "
    "the values of every attribute; see doc/performance.md)";

template <typename S>
concept HasTuneIndexes = requires(S& s) {
  s.tune_indexes(true);
};

template <typename S>
concept HasSetAutoIndex = requires(S& s) {
  s.set_auto_index(AutoIndex::kSchema);
};

// One planned action, printed by whichever description it offers.
template <typename T>
void PrintAction(std::ostream& out, const T& a) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out << std::string_view(a) << "\n";
  } else if constexpr (requires {
                         { a.ToString() } -> std::convertible_to<std::string>;
                       }) {
    out << std::string(a.ToString()) << "\n";
  } else if constexpr (requires {
                         { a.ToEdn() } -> std::convertible_to<edn::Value>;
                       }) {
    out << edn::Print(a.ToEdn()) << "\n";
  } else if constexpr (requires {
                         { a.sql } -> std::convertible_to<std::string>;
                       }) {
    out << std::string(a.sql) << "\n";
  } else {
    out << "(an index action)\n";
  }
}

template <typename T>
void PrintActions(std::ostream& out, const T& actions) {
  if constexpr (!std::is_convertible_v<const T&, std::string_view> && std::ranges::range<T>) {
    size_t n = 0;
    for (const auto& a : actions) {
      PrintAction(out, a);
      ++n;
    }
    if (n == 0) out << "no index changes\n";
  } else {
    PrintAction(out, actions);
  }
}

// Runs S::tune_indexes(dry_run) and prints the planned actions, one a line; kUnsupported
// ("not available") when S has no tune_indexes.
template <typename S>
Status TuneIndexes(S& store, bool dry_run, std::ostream& out) {
  if constexpr (HasTuneIndexes<S>) {
    auto result = store.tune_indexes(dry_run);
    if constexpr (std::is_same_v<decltype(result), Status>) {
      return result;
    } else {
      if (!result.ok()) return result.status();
      PrintActions(out, *result);
      return Status::OK();
    }
  } else {
    (void)store;
    (void)dry_run;
    (void)out;
    return Status::Unsupported(kTuneUnavailable);
  }
}

// Sets the automatic index mode: S::set_auto_index when there is one, else `reopen` (the
// mode is an open option). kUnsupported without tune_indexes.
template <typename S>
Status SetAutoIndexMode(S& store, AutoIndex mode, const std::function<Status()>& reopen) {
  if constexpr (!HasTuneIndexes<S>) {
    (void)store;
    (void)mode;
    (void)reopen;
    return Status::Unsupported(kTuneUnavailable);
  } else if constexpr (HasSetAutoIndex<S>) {
    (void)reopen;
    if constexpr (std::is_void_v<decltype(store.set_auto_index(mode))>) {
      store.set_auto_index(mode);
    } else {
      auto st = store.set_auto_index(mode);
      if constexpr (std::is_same_v<decltype(st), Status>) return st;
    }
    return Status::OK();
  } else {
    (void)store;
    (void)mode;
    return reopen();
  }
}

}  // namespace mentat::cli
