// Directory listings, bounded whole-file reads and parent directories without std::filesystem.
#include "pkg/fd/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "test/support/temp_dir.h"

namespace rdmadp::fd {
namespace {

using ::testing::UnorderedElementsAre;

TEST(Files, ListDirNamesEveryEntryButDotAndDotDot) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/a.sock") << "";
  std::ofstream(dir.path() + "/.hidden") << "";
  ASSERT_EQ(::mkdir((dir.path() + "/sub").c_str(), 0755), 0);
  EXPECT_THAT(ListDir(dir.path()), UnorderedElementsAre("a.sock", ".hidden", "sub"));
  EXPECT_THAT(ListDir(dir.path() + "/sub"), ::testing::IsEmpty());
}

TEST(Files, ListDirOfAMissingDirectoryOrAFileIsEmpty) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  EXPECT_THAT(ListDir(dir.path() + "/missing"), ::testing::IsEmpty());
  EXPECT_THAT(ListDir(dir.path() + "/file"), ::testing::IsEmpty());
}

// Directories only, a symlink to one not followed; a missing directory or a file is an
// error with its errno (a walk says what it could not list).
TEST(Files, ListSubdirsNamesDirectoriesOnly) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  ASSERT_EQ(::mkdir((dir.path() + "/a.slice").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir.path() + "/b").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("b", (dir.path() + "/link").c_str()), 0);
  auto subdirs = ListSubdirs(dir.path());
  ASSERT_TRUE(subdirs.has_value());
  EXPECT_THAT(*subdirs, UnorderedElementsAre("a.slice", "b"));
  errno = 0;
  EXPECT_EQ(ListSubdirs(dir.path() + "/missing"), std::nullopt);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(ListSubdirs(dir.path() + "/file"), std::nullopt);
  EXPECT_EQ(errno, ENOTDIR);
}

// Symlinks only, dangling ones too (a link's target need not be mounted).
TEST(Files, ListLinksNamesLinksOnly) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  ASSERT_EQ(::mkdir((dir.path() + "/d").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("d", (dir.path() + "/to-dir").c_str()), 0);
  ASSERT_EQ(::symlink("/nowhere/0.log", (dir.path() + "/dangling").c_str()), 0);
  auto links = ListLinks(dir.path());
  ASSERT_TRUE(links.has_value());
  EXPECT_THAT(*links, UnorderedElementsAre("to-dir", "dangling"));
  errno = 0;
  EXPECT_EQ(ListLinks(dir.path() + "/missing"), std::nullopt);
  EXPECT_EQ(errno, ENOENT);
}

TEST(Files, ReadFileReturnsTheWholeFileUpToTheLimit) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::string big(10000, 'x');
  big[9999] = 'y';
  std::ofstream(path) << big;
  EXPECT_EQ(ReadFile(path, 1 << 20), big);
  EXPECT_EQ(ReadFile(path, 10000), big);
  EXPECT_EQ(ReadFile(path, 5000), big.substr(0, 5000));
  std::ofstream(dir.path() + "/empty") << "";
  EXPECT_EQ(ReadFile(dir.path() + "/empty", 10), "");
}

TEST(Files, ReadFileOfAMissingFileOrADirectoryFailsWithErrno) {
  testing::TempDir dir;
  errno = 0;
  EXPECT_EQ(ReadFile(dir.path() + "/missing", 10), std::nullopt);
  EXPECT_EQ(errno, ENOENT);
  errno = 0;
  EXPECT_EQ(ReadFile(dir.path(), 10), std::nullopt);
  EXPECT_EQ(errno, EISDIR);
}

TEST(Files, ReadFileReadsProcFilesWhoseSizeIsZero) {
  auto statm = ReadFile("/proc/self/statm", 256);
  ASSERT_TRUE(statm.has_value());
  EXPECT_FALSE(statm->empty());
}

TEST(Files, ParentDirWalksUpToTheRootThenStops) {
  EXPECT_EQ(ParentDir("/var/lib/kubelet"), "/var/lib");
  EXPECT_EQ(ParentDir("/var/lib/kubelet/"), "/var/lib");
  EXPECT_EQ(ParentDir("/var"), "/");
  EXPECT_EQ(ParentDir("/"), "");
  EXPECT_EQ(ParentDir("relative"), "");
  EXPECT_EQ(ParentDir("a/b"), "a");
  EXPECT_EQ(ParentDir(""), "");
}

}  // namespace
}  // namespace rdmadp::fd
