// WalCheckpointer: runs SQLite's WAL checkpoints on a thread of its own, so that no commit waits
// for one.
//
// With SQLite's automatic checkpoints the commit that takes the write-ahead log past the limit
// copies the log's pages back into the database file and fsyncs it before its COMMIT returns:
// several milliseconds, once every few hundred commits, on whichever request made that commit.
// Here the store's connection has no automatic checkpoint; a commit hook (sqlite3_wal_hook) wakes
// this thread when a commit leaves at least `threshold_pages` frames in the log, and the thread
// runs a PASSIVE checkpoint on a connection of its own. A PASSIVE checkpoint never waits for
// readers or writers: commits go on meanwhile. SQLite starts the log over at the first write that
// begins after a checkpoint copied everything; when commits come back to back, each begins before
// the pass that its predecessor asked for is done, so the log would only grow. Hence the catch-up:
// when a pass has left at most 64 frames uncopied (or the log has reached four times the
// threshold), the next commit copies them itself (a few pages and one fsync of the database file,
// not thousands of pages) and the connection's next write starts the log over. Nothing about
// durability changes: a commit is durable once its log frames are synced, checkpointed or not.
//
// Thread-safety: Watch and Unwatch are called by the connection's owner; the hook runs on
// whichever thread commits; the counters may be read from any thread.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status_macros.h"

namespace agentckpt {

class WalCheckpointer {
 public:
  // Opens a connection of its own to the database at `path` (which must exist, in WAL mode) and
  // starts the thread. kUnavailable if the connection cannot be opened.
  static StatusOr<std::unique_ptr<WalCheckpointer>> Start(const std::string& path,
                                                          int threshold_pages);
  // Stops and joins the thread and closes its connection. Unwatch every watched connection first.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Installs the commit hook on `db` (replacing any automatic checkpoint); Unwatch removes it.
  void Watch(sqlite3* db);
  static void Unwatch(sqlite3* db);

  // Checkpoints run, and of those the ones that failed (an I/O error, say; not SQLITE_BUSY,
  // which only means another connection, e.g. another process's, was checkpointing the file).
  // A failed or busy one is tried again after the next commit over the threshold.
  int64_t checkpoints() const;
  int64_t failures() const;
  // Checkpoints run inline by a commit (the catch-up above).
  int64_t catch_ups() const;
  // Blocks until no pass is asked for or running (for tests: the state after the last commit's
  // checkpoint, without sleeping).
  void WaitUntilIdle();

 private:
  WalCheckpointer(sqlite3* db, int threshold_pages);
  static int OnCommit(void* self, sqlite3* db, const char* name, int frames);
  void Run();

  sqlite3* const db_;  // the checkpointing connection, used only by the thread
  const int threshold_pages_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  bool requested_ = false;
  bool stop_ = false;
  bool running_ = false;  // a pass is under way on the thread
  int backfilled_ = 0;    // the log's frames the last pass had copied (0: none since a restart)
  int64_t catch_ups_ = 0;
  int64_t checkpoints_ = 0;
  int64_t failures_ = 0;
  std::thread thread_;
};

}  // namespace agentckpt
