#include <string>

#include "store/checkpoint_store.h"
#include "store/sqlite/sqlite_store.h"
#if AGENTCKPT_WITH_FIRESTORE
#include "store/firestore/firestore_store.h"
#endif

namespace agentckpt {

StatusOr<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& url) {
  const std::string sqlite_prefix = "sqlite://";
  if (url.rfind(sqlite_prefix, 0) == 0) {
    std::string path = url.substr(sqlite_prefix.size());
    if (path.empty()) return InvalidArgumentError("CKPT_STORE: sqlite:// needs a file path");
    auto store = SqliteStore::Open(path);
    if (!store.ok()) return store.status();
    return std::unique_ptr<CheckpointStore>(std::move(store).value());
  }
  if (url.rfind("firestore://", 0) == 0) {
#if AGENTCKPT_WITH_FIRESTORE
    auto store = FirestoreStore::OpenUrl(url);
    if (!store.ok()) return store.status();
    return std::unique_ptr<CheckpointStore>(std::move(store).value());
#else
    return InvalidArgumentError(
        "CKPT_STORE: this agentckpt is built without the Firestore backend "
        "(AGENTCKPT_WITH_FIRESTORE=OFF)");
#endif
  }
  return InvalidArgumentError("CKPT_STORE: unknown store URL \"" + url +
                              "\" (expected sqlite:///path/to/file.db or "
                              "firestore://projects/P/databases/D)");
}

}  // namespace agentckpt
