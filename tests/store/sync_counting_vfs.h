// SyncCountingVfs: an SQLite VFS that wraps the default one and counts xSync calls on write-ahead
// log files and on main database files. While an instance lives it is the process's default VFS,
// so any connection opened meanwhile (e.g. inside SqliteStore::Open) goes through it; that lets a
// test observe the connection's effective synchronous level by what it fsyncs.
//
// One instance at a time; every connection opened through it must be closed before it is
// destroyed. Counters are atomic.
#pragma once

#include <sqlite3.h>

#include <atomic>

namespace agentckpt::testing {

class SyncCountingVfs {
 public:
  SyncCountingVfs();   // registers itself as the default VFS
  ~SyncCountingVfs();  // unregisters; the previous default is the default again
  SyncCountingVfs(const SyncCountingVfs&) = delete;
  SyncCountingVfs& operator=(const SyncCountingVfs&) = delete;

  int wal_syncs() const { return wal_syncs_.load(); }
  int db_syncs() const { return db_syncs_.load(); }
  void Reset() {
    wal_syncs_ = 0;
    db_syncs_ = 0;
  }

 private:
  friend struct SyncCountingVfsAccess;
  sqlite3_vfs vfs_{};
  sqlite3_vfs* base_ = nullptr;
  std::atomic<int> wal_syncs_{0};
  std::atomic<int> db_syncs_{0};
};

}  // namespace agentckpt::testing
