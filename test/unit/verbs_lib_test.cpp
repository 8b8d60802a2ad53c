// libibverbs is loaded only where the kernel lists uverbs devices, and then for real.
#include "pkg/rdma/verbs_lib.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "test/support/temp_dir.h"

namespace rdmadp::rdma {
namespace {

TEST(VerbsLib, LoadsOnlyOnceAUverbsDeviceExists) {
  testing::TempDir sysfs;
  const std::string dir = sysfs.path() + "/class/infiniband_verbs";
  std::filesystem::create_directories(dir);
  ::setenv("SYSFS_PATH", sysfs.path().c_str(), 1);  // read by us and by libibverbs
  std::string why;
  EXPECT_EQ(VerbsLib::Get(&why), nullptr);
  EXPECT_EQ(why, "no uverbs device in " + dir);
  std::filesystem::create_directories(dir + "/abi_version_is_not_a_device");
  EXPECT_EQ(VerbsLib::Get(&why), nullptr);
  // The RDMA driver loads after the plugin started: the next call loads the library.
  std::filesystem::create_directories(dir + "/uverbs0");
  const VerbsLib* verbs = VerbsLib::Get(&why);
  ASSERT_NE(verbs, nullptr) << why;
  EXPECT_EQ(why, "");
  int count = -1;
  ibv_device** list = verbs->get_device_list(&count);  // a half-made device is skipped
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(count, 0);
  verbs->free_device_list(list);
  EXPECT_STREQ(verbs->event_type_str(IBV_EVENT_PORT_ACTIVE), "port active");
  EXPECT_EQ(VerbsLib::Get(), verbs);  // loaded once
  ::unsetenv("SYSFS_PATH");
}

TEST(VerbsLib, UverbsDevicesAreRecognisedByName) {
  testing::TempDir sysfs;
  EXPECT_FALSE(HasUverbsDevices(sysfs.path() + "/missing"));
  std::filesystem::create_directories(sysfs.path() + "/abi_version");
  EXPECT_FALSE(HasUverbsDevices(sysfs.path()));
  std::filesystem::create_directories(sysfs.path() + "/uverbs3");
  EXPECT_TRUE(HasUverbsDevices(sysfs.path()));
}

}  // namespace
}  // namespace rdmadp::rdma
