#include "tests/store/sync_counting_vfs.h"

#include <cstdlib>
#include <cstring>

namespace agentckpt::testing {

// The file object: our header, then the base VFS's file object.
struct CountingFile {
  sqlite3_file header;
  SyncCountingVfs* owner;
  int open_flags;
  sqlite3_file* real;
};

struct SyncCountingVfsAccess {
  static SyncCountingVfs* Owner(sqlite3_vfs* vfs) {
    return static_cast<SyncCountingVfs*>(vfs->pAppData);
  }
  static sqlite3_vfs* Base(sqlite3_vfs* vfs) { return Owner(vfs)->base_; }
  static void CountSync(CountingFile* f) {
    if (f->open_flags & SQLITE_OPEN_WAL) ++f->owner->wal_syncs_;
    if (f->open_flags & SQLITE_OPEN_MAIN_DB) ++f->owner->db_syncs_;
  }
};

namespace {

using Access = SyncCountingVfsAccess;

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<CountingFile*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xWrite(Real(f), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  Access::CountSync(reinterpret_cast<CountingFile*>(f));
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), off, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), off, p);
}

// Version 2: no memory-mapped I/O through the wrapper (SQLite then uses plain reads).
const sqlite3_io_methods kMethods = {
    2,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = reinterpret_cast<CountingFile*>(file);
  f->header.pMethods = nullptr;
  f->owner = Access::Owner(vfs);
  f->open_flags = flags;
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  int rc = Access::Base(vfs)->xOpen(Access::Base(vfs), name, f->real, flags, out_flags);
  if (f->real->pMethods != nullptr) f->header.pMethods = &kMethods;
  return rc;
}
int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  return Access::Base(vfs)->xDelete(Access::Base(vfs), name, sync_dir);
}
int AccessFile(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return Access::Base(vfs)->xAccess(Access::Base(vfs), name, flags, out);
}
int FullPathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  return Access::Base(vfs)->xFullPathname(Access::Base(vfs), name, n, out);
}
void* DlOpen(sqlite3_vfs* vfs, const char* name) {
  return Access::Base(vfs)->xDlOpen(Access::Base(vfs), name);
}
void DlError(sqlite3_vfs* vfs, int n, char* out) {
  Access::Base(vfs)->xDlError(Access::Base(vfs), n, out);
}
void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* sym))(void) {
  return Access::Base(vfs)->xDlSym(Access::Base(vfs), handle, sym);
}
void DlClose(sqlite3_vfs* vfs, void* handle) {
  Access::Base(vfs)->xDlClose(Access::Base(vfs), handle);
}
int Randomness(sqlite3_vfs* vfs, int n, char* out) {
  return Access::Base(vfs)->xRandomness(Access::Base(vfs), n, out);
}
int SleepMicros(sqlite3_vfs* vfs, int micros) {
  return Access::Base(vfs)->xSleep(Access::Base(vfs), micros);
}
int CurrentTime(sqlite3_vfs* vfs, double* out) {
  return Access::Base(vfs)->xCurrentTime(Access::Base(vfs), out);
}
int GetLastError(sqlite3_vfs* vfs, int n, char* out) {
  return Access::Base(vfs)->xGetLastError(Access::Base(vfs), n, out);
}
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return Access::Base(vfs)->xCurrentTimeInt64(Access::Base(vfs), out);
}

}  // namespace

SyncCountingVfs::SyncCountingVfs() {
  base_ = sqlite3_vfs_find(nullptr);
  if (base_ == nullptr || base_->iVersion < 2) std::abort();  // no usable default VFS
  vfs_.iVersion = 2;
  vfs_.szOsFile = static_cast<int>(sizeof(CountingFile)) + base_->szOsFile;
  vfs_.mxPathname = base_->mxPathname;
  vfs_.zName = "agentckpt-sync-counting";
  vfs_.pAppData = this;
  vfs_.xOpen = Open;
  vfs_.xDelete = Delete;
  vfs_.xAccess = AccessFile;
  vfs_.xFullPathname = FullPathname;
  vfs_.xDlOpen = DlOpen;
  vfs_.xDlError = DlError;
  vfs_.xDlSym = DlSym;
  vfs_.xDlClose = DlClose;
  vfs_.xRandomness = Randomness;
  vfs_.xSleep = SleepMicros;
  vfs_.xCurrentTime = CurrentTime;
  vfs_.xGetLastError = GetLastError;
  vfs_.xCurrentTimeInt64 = CurrentTimeInt64;
  if (sqlite3_vfs_register(&vfs_, 1) != SQLITE_OK) std::abort();
}

SyncCountingVfs::~SyncCountingVfs() {
  sqlite3_vfs_unregister(&vfs_);
  sqlite3_vfs_register(base_, 1);  // make the original the default again
}

}  // namespace agentckpt::testing
