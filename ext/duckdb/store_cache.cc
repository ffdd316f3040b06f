#include "store_cache.h"

#include <cstdlib>
#include <filesystem>

namespace mentat::duckdb_ext {

namespace {
constexpr char kMemoryKey[] = ":memory:";
}  // namespace

size_t StoreCacheCapacityFromEnv() {
  const char* env = std::getenv("MENTAT_STORE_CACHE");
  if (env == nullptr || *env == '\0') return 16;
  char* end = nullptr;
  long long n = std::strtoll(env, &end, 10);
  if (end == env || *end != '\0' || n < 1) return 16;
  return static_cast<size_t>(n);
}

StoreCache& StoreCache::Global() {
  static StoreCache* cache = new StoreCache(StoreCacheCapacityFromEnv());
  return *cache;
}

std::string StoreCache::Key(const std::string& path) {
  if (path.empty() || path == kMemoryKey) return kMemoryKey;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  if (ec) p = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return path;
  return p.string();
}

size_t StoreCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

Result<std::shared_ptr<Store>> StoreCache::Get(const std::string& path, Mode mode) {
  std::unique_lock<std::mutex> lock(mu_);
  auto known = keys_.find(path);
  std::string key;
  if (known != keys_.end()) {
    key = known->second;
  } else {
    lock.unlock();
    key = Key(path);
    lock.lock();
    if (keys_.size() > 4096) keys_.clear();
    keys_.emplace(path, key);
  }
  const bool memory = key == kMemoryKey;
  if (auto it = entries_.find(key); it != entries_.end()) {
    if (!memory) lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.store;
  }
  if (!memory && mode == Mode::kMustExist) {
    std::error_code ec;
    if (!std::filesystem::exists(key, ec)) {
      return Status::NotFound("no mentat store at '" + path + "'");
    }
  }
  // Opening reads only the schema and partition marks, so doing it under the lock keeps
  // two threads from opening the same file twice without stalling others for long.
  auto opened = Store::open(memory ? "" : key);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<Store> store(std::move(*opened));
  Entry entry{store, lru_.end()};
  if (!memory) {
    lru_.push_front(key);
    entry.lru = lru_.begin();
  }
  entries_.emplace(key, std::move(entry));
  while (lru_.size() > capacity_) {
    entries_.erase(lru_.back());
    lru_.pop_back();
  }
  return store;
}

}  // namespace mentat::duckdb_ext
