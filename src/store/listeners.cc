#include "store/listeners.h"

#include <deque>
#include <utility>

#include "store/log.h"
#include "store/store_impl.h"

namespace mentat {

Listeners::~Listeners() { Shutdown(); }

uint64_t Listeners::Add(TxListener cb, std::set<Entid> attrs, Entid after) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_id_++;
  entries_[id] = Entry{std::move(cb), std::move(attrs), after};
  if (delivered_ == 0) delivered_ = after;  // the first listener: from now on
  if (!thread_.joinable() && !stop_) thread_ = std::thread([this] { Run(); });
  cv_.notify_all();
  return id;
}

void Listeners::Remove(uint64_t id) {
  std::unique_lock<std::mutex> lock(mu_);
  entries_.erase(id);
  if (std::this_thread::get_id() == thread_.get_id()) return;  // from its own callback
  idle_.wait(lock, [&] { return running_ != id; });
}

void Listeners::Committed(const TxReport& report) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.empty() || report.tx_id <= delivered_) return;
  own_[report.tx_id] = report;
  cv_.notify_all();
}

void Listeners::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  store_ = nullptr;
}

Result<std::vector<TxReport>> Listeners::Pending(Entid last) {
  std::vector<TxReport> out;
  Entid from;
  {
    std::lock_guard<std::mutex> lock(mu_);
    from = delivered_ + 1;
    bool all = true;
    for (Entid t = from; t <= last && all; ++t) all = own_.count(t) > 0;
    if (all) {
      for (Entid t = from; t <= last; ++t) out.push_back(own_[t]);
      return out;
    }
  }
  MENTAT_ASSIGN_OR_RETURN(out, store_->Read([&](StoreImpl::Conn* c) {
    return ReadLog(c->db.get(), *c->schema, from, last + 1, std::nullopt);
  }));
  std::lock_guard<std::mutex> lock(mu_);
  for (TxReport& r : out) {
    auto it = own_.find(r.tx_id);
    if (it != own_.end()) r = it->second;  // with its tempids
  }
  return out;
}

void Listeners::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (entries_.empty()) {
      own_.clear();
      delivered_ = 0;  // the next first listener starts from its own point
      cv_.wait(lock, [&] { return stop_ || !entries_.empty(); });
      continue;
    }
    cv_.wait_for(lock, kPollInterval);
    if (stop_ || entries_.empty()) continue;
    lock.unlock();
    auto last = store_->Read([](StoreImpl::Conn* c) {
      return c->db->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", 0);
    });
    std::vector<TxReport> reports;
    if (last.ok()) {
      lock.lock();
      bool news = *last > delivered_;
      lock.unlock();
      if (news) {
        auto got = Pending(*last);
        if (got.ok()) reports = std::move(*got);
      }
    }
    lock.lock();
    for (TxReport& r : reports) {
      if (stop_) break;
      // Each listener in turn, the lock released while its callback runs.
      for (auto it = entries_.begin(); it != entries_.end();) {
        uint64_t id = it->first;
        const Entry& e = it->second;
        bool wanted = r.tx_id > e.after;
        if (wanted && !e.attrs.empty()) {
          wanted = false;
          for (const Datom& d : r.tx_data) wanted = wanted || e.attrs.count(d.a) > 0;
        }
        if (wanted) {
          TxListener cb = e.cb;
          running_ = id;
          lock.unlock();
          try {
            cb(r);
          } catch (...) {  // a listener's exception stays with it
          }
          lock.lock();
          running_ = 0;
          idle_.notify_all();
        }
        it = entries_.upper_bound(id);  // entries may have changed meanwhile
      }
      delivered_ = std::max(delivered_, r.tx_id);
      own_.erase(own_.begin(), own_.upper_bound(r.tx_id));
    }
  }
}

// ---- The public API ----

ListenerHandle::ListenerHandle(ListenerHandle&& o) noexcept
    : registry_(std::move(o.registry_)), id_(o.id_) {
  o.registry_ = nullptr;
}

ListenerHandle& ListenerHandle::operator=(ListenerHandle&& o) noexcept {
  if (this != &o) {
    stop();
    registry_ = std::move(o.registry_);
    id_ = o.id_;
    o.registry_ = nullptr;
  }
  return *this;
}

ListenerHandle::~ListenerHandle() { stop(); }

void ListenerHandle::stop() {
  if (!registry_) return;
  std::static_pointer_cast<Listeners>(registry_)->Remove(id_);
  registry_ = nullptr;
}

namespace {

class QueueImpl : public TxReportQueue {
 public:
  ~QueueImpl() override { handle_.stop(); }
  std::optional<TxReport> poll(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !reports_.empty(); })) return std::nullopt;
    TxReport r = std::move(reports_.front());
    reports_.pop_front();
    return r;
  }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return reports_.size();
  }
  void Push(const TxReport& r) {
    std::lock_guard<std::mutex> lock(mu_);
    reports_.push_back(r);
    cv_.notify_all();
  }
  ListenerHandle handle_;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TxReport> reports_;
};

}  // namespace

Result<ListenerHandle> Store::listen(TxListener callback, std::vector<std::string> attributes) {
  if (ImplOf(this)->borrowed())
    return Status::Unsupported("listeners need a store mentat opened, not a host's connection");
  if (!callback) return Status::InvalidArgument("listen needs a callback");
  auto schema = this->schema();
  std::set<Entid> attrs;
  for (const std::string& name : attributes) {
    std::string ident = !name.empty() && name[0] == ':' ? name.substr(1) : name;
    const Attribute* a = schema->attribute(ident);
    if (!a) return Status::Schema("unknown attribute :" + ident + " to listen to");
    attrs.insert(a->id);
  }
  MENTAT_ASSIGN_OR_RETURN(Entid after, last_tx());
  std::shared_ptr<Listeners> reg = ImplOf(this)->listeners();
  uint64_t id = reg->Add(std::move(callback), std::move(attrs), after);
  return ListenerHandle(reg, id);
}

Result<std::shared_ptr<TxReportQueue>> Store::tx_report_queue() {
  auto q = std::make_shared<QueueImpl>();
  QueueImpl* raw = q.get();
  MENTAT_ASSIGN_OR_RETURN(q->handle_, listen([raw](const TxReport& r) { raw->Push(r); }));
  return std::shared_ptr<TxReportQueue>(std::move(q));
}

}  // namespace mentat
