// StoreFileIdentity: the files a store has open, remembered by device and inode, so that a file
// deleted, moved or replaced under a running process is noticed. Internal to store/sqlite.
//
// Why: SQLite keeps writing to the files it opened. When the database or its -wal file is
// deleted (an operator clearing a directory, a volume cleanup), every later commit still
// succeeds, into a file that no later open will find: a restart then sees none of it. Comparing
// what is at each path with what was opened, after each commit, turns that into an error
// before anything is acknowledged.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt::internal {

class StoreFileIdentity {
 public:
  StoreFileIdentity() = default;
  // Remembers the device and inode of each of `paths` that exists now; a path that does not
  // exist is skipped. Relative paths are made absolute against the working directory now.
  static StoreFileIdentity Record(const std::vector<std::string>& paths);

  // OK while each remembered path still names the file that was there at Record. kDataLoss,
  // naming the path, when it names nothing now (deleted or moved) or another file (replaced);
  // kUnavailable when the path cannot be examined (stat failed otherwise, e.g. EACCES or EIO).
  // One stat(2) per file. Thread-compatible: const, no shared state.
  Status Check() const;

  // The remembered absolute paths, in the order given to Record.
  std::vector<std::string> paths() const;

 private:
  struct File {
    std::string path;
    dev_t device;
    ino_t inode;
  };
  std::vector<File> files_;
};

}  // namespace agentckpt::internal
