// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
#pragma once

#include <string>

namespace agentckpt::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace agentckpt::testing
