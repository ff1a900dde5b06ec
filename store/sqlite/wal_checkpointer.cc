#include "store/sqlite/wal_checkpointer.h"

namespace agentckpt {
namespace {

// What a commit copies itself at most, when the last pass left little (see OnCommit).
constexpr int kCatchUpFrames = 64;

}  // namespace

StatusOr<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& path,
                                                                  int threshold_pages) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open the WAL checkpoint connection to " + path + ": " +
                          (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return UnavailableError(message);
  }
  // Its own commits (none: it only checkpoints) must not checkpoint either. A connection that
  // has read nothing has not opened the log yet, and its checkpoint would do nothing: read the
  // schema once.
  sqlite3_wal_autocheckpoint(db, 0);
  rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = "cannot read " + path + " for WAL checkpoints: " + sqlite3_errmsg(db);
    sqlite3_close_v2(db);
    return UnavailableError(message);
  }
  std::unique_ptr<WalCheckpointer> checkpointer(new WalCheckpointer(db, threshold_pages));
  checkpointer->thread_ = std::thread([c = checkpointer.get()] { c->Run(); });
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(sqlite3* db, int threshold_pages)
    : db_(db), threshold_pages_(threshold_pages) {}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  idle_.notify_all();
  if (thread_.joinable()) thread_.join();
  sqlite3_close_v2(db_);
}

void WalCheckpointer::Watch(sqlite3* db) { sqlite3_wal_hook(db, &WalCheckpointer::OnCommit, this); }

void WalCheckpointer::Unwatch(sqlite3* db) { sqlite3_wal_hook(db, nullptr, nullptr); }

int WalCheckpointer::OnCommit(void* self, sqlite3* db, const char* name, int frames) {
  auto* c = static_cast<WalCheckpointer*>(self);
  std::unique_lock<std::mutex> lock(c->mu_);
  if (frames < c->backfilled_) c->backfilled_ = 0;  // the log has started over since that pass
  if (frames < c->threshold_pages_) return SQLITE_OK;
  // A pass is asked for or under way; it takes in these frames too.
  if (c->running_ || c->requested_) return SQLITE_OK;
  // SQLite starts the log over only at a write that begins after everything was copied. When
  // commits come back to back each begins before the pass its predecessor asked for is done, so
  // passes alone would never let the log start over. Once a pass has left only a few frames (or,
  // as a bound, once the log is four times the threshold), this commit copies the rest itself:
  // a few pages and one fsync of the database file, and its connection's next write starts the
  // log over.
  const bool few_left = c->backfilled_ > 0 && frames - c->backfilled_ <= kCatchUpFrames;
  if (few_left || frames >= 4 * c->threshold_pages_) {
    c->backfilled_ = 0;
    ++c->catch_ups_;
    lock.unlock();
    (void)sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return SQLITE_OK;
  }
  c->requested_ = true;
  lock.unlock();
  c->wake_.notify_one();
  return SQLITE_OK;
}

void WalCheckpointer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || requested_; });
    if (stop_) return;
    requested_ = false;
    running_ = true;
    lock.unlock();
    int copied = 0;
    int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, &copied);
    lock.lock();
    running_ = false;
    ++checkpoints_;
    if (rc == SQLITE_OK) backfilled_ = copied;
    // SQLITE_BUSY: another connection (another process's) was checkpointing; nothing is wrong.
    if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY) ++failures_;
    if (!requested_) idle_.notify_all();
  }
}

void WalCheckpointer::WaitUntilIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return stop_ || (!requested_ && !running_); });
}

int64_t WalCheckpointer::catch_ups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return catch_ups_;
}

int64_t WalCheckpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

int64_t WalCheckpointer::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

}  // namespace agentckpt
