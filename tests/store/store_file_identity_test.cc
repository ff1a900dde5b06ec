// StoreFileIdentity against the real filesystem: files deleted, moved and replaced under it.
#include "store/sqlite/store_file_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace agentckpt::internal {
namespace {

using agentckpt::testing::TempDir;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(StoreFileIdentityTest, UnchangedFilesPassAndMissingOnesAreNotRecorded) {
  TempDir dir;
  WriteFile(dir.File("a.db"), "a");
  WriteFile(dir.File("a.db-wal"), "w");
  auto identity =
      StoreFileIdentity::Record({dir.File("a.db"), dir.File("a.db-wal"), dir.File("a.db-shm")});
  EXPECT_EQ(identity.paths().size(), 2u);
  EXPECT_TRUE(identity.Check().ok()) << identity.Check().ToString();
  // Writing to a file (same inode) is not a change of identity.
  WriteFile(dir.File("a.db"), "rewritten in place");
  EXPECT_TRUE(identity.Check().ok());
}

TEST(StoreFileIdentityTest, PathsAreMadeAbsoluteAndNormal) {
  TempDir dir;
  WriteFile(dir.File("a.db"), "a");
  auto identity = StoreFileIdentity::Record({dir.path() + "/./sub/../a.db"});
  ASSERT_EQ(identity.paths().size(), 1u);
  EXPECT_EQ(identity.paths()[0], std::filesystem::path(dir.File("a.db")).lexically_normal());
  EXPECT_TRUE(std::filesystem::path(identity.paths()[0]).is_absolute());
}

TEST(StoreFileIdentityTest, ADeletedFileIsDataLossNamingIt) {
  TempDir dir;
  WriteFile(dir.File("a.db"), "a");
  WriteFile(dir.File("a.db-wal"), "w");
  auto identity = StoreFileIdentity::Record({dir.File("a.db"), dir.File("a.db-wal")});
  std::filesystem::remove(dir.File("a.db-wal"));
  Status s = identity.Check();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find(dir.File("a.db-wal") + " was deleted or moved"), std::string::npos)
      << s.message();
}

TEST(StoreFileIdentityTest, AMovedFileOrDirectoryIsDataLoss) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("data"));
  WriteFile(dir.File("data/a.db"), "a");
  auto identity = StoreFileIdentity::Record({dir.File("data/a.db")});
  std::filesystem::rename(dir.File("data"), dir.File("data.old"));
  EXPECT_EQ(identity.Check().code(), StatusCode::kDataLoss);
  // Moved back, it is the same file again.
  std::filesystem::rename(dir.File("data.old"), dir.File("data"));
  EXPECT_TRUE(identity.Check().ok()) << identity.Check().ToString();
}

TEST(StoreFileIdentityTest, AFileReplacedByAnotherIsDataLoss) {
  TempDir dir;
  WriteFile(dir.File("a.db"), "a");
  auto identity = StoreFileIdentity::Record({dir.File("a.db")});
  WriteFile(dir.File("backup.db"), "a");  // same bytes, another file
  std::filesystem::rename(dir.File("backup.db"), dir.File("a.db"));
  Status s = identity.Check();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find(dir.File("a.db") + " was replaced by another file"), std::string::npos)
      << s.message();
}

TEST(StoreFileIdentityTest, APathThatCannotBeExaminedIsUnavailable) {
  TempDir dir;
  WriteFile(dir.File("a.db"), "a");
  auto identity = StoreFileIdentity::Record({dir.File("a.db")});
  // A path component that became a loop of symbolic links: stat fails with ELOOP, which says
  // nothing about the file itself.
  std::filesystem::rename(dir.File("a.db"), dir.File("real.db"));
  std::filesystem::create_symlink(dir.File("a.db"), dir.File("a.db.loop"));
  std::filesystem::create_symlink(dir.File("a.db.loop"), dir.File("a.db"));
  Status s = identity.Check();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("cannot examine store file " + dir.File("a.db")), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace agentckpt::internal
