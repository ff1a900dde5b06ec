#include "store/sqlite/store_file_identity.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace agentckpt::internal {

StoreFileIdentity StoreFileIdentity::Record(const std::vector<std::string>& paths) {
  StoreFileIdentity identity;
  for (const std::string& path : paths) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    std::string name = ec ? path : absolute.lexically_normal().string();
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) continue;
    identity.files_.push_back(File{std::move(name), st.st_dev, st.st_ino});
  }
  return identity;
}

Status StoreFileIdentity::Check() const {
  for (const File& f : files_) {
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT || err == ENOTDIR) {
        return DataLossError("store file " + f.path +
                             " was deleted or moved while open: what is written to it now would "
                             "be lost at the next start, so this store refuses writes; restart "
                             "the process to open what is at that path now");
      }
      return UnavailableError("cannot examine store file " + f.path + ": " +
                              std::error_code(err, std::generic_category()).message());
    }
    if (st.st_dev != f.device || st.st_ino != f.inode) {
      return DataLossError("store file " + f.path +
                           " was replaced by another file while open: what is written to the "
                           "open one would be lost at the next start, so this store refuses "
                           "writes; restart the process to open what is at that path now");
    }
  }
  return OkStatus();
}

std::vector<std::string> StoreFileIdentity::paths() const {
  std::vector<std::string> out;
  out.reserve(files_.size());
  for (const File& f : files_) out.push_back(f.path);
  return out;
}

}  // namespace agentckpt::internal
