#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "pkg/cdi/cdi_spec.h"
#include "pkg/cdi/memlock_hook.h"
#include "pkg/cdi/spec_files.h"
#include "pkg/text/cat.h"
#include "test/support/temp_dir.h"

namespace rdmadp::cdi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

config::ResourceConfig Resource(std::string prefix, std::string name) {
  config::ResourceConfig rc;
  rc.resource_prefix = std::move(prefix);
  rc.resource_name = std::move(name);
  rc.rdma_hca_max = 10;
  return rc;
}

pool::SnapshotPtr Snapshot(const config::ResourceConfig& rc, int hcas, bool cdi = true) {
  sysfs::NodeInventory inv;
  for (int i = 0; i < hcas; ++i) {
    sysfs::PciFunction fn;
    fn.address = "0000:1" + std::to_string(i) + ":00.0";
    fn.rdma_capable = true;
    fn.char_devices = {"umad" + std::to_string(i), "uverbs" + std::to_string(i)};
    inv.functions.push_back(fn);
  }
  pool::CdiNaming naming{Kind(rc), AnnotationKey(rc)};
  return pool::PoolSnapshot::Build(rc, inv, cdi ? &naming : nullptr);
}

// Structural check equivalent to the published CDI JSON schema (schema.json + defs.json):
// required cdiVersion/kind/devices, no other top-level keys, each device with a name and
// containerEdits, each device node with a path; plus the name rules of CDI's parser.
void ExpectValidCdiSpec(const std::string& text) {
  YAML::Node spec = YAML::Load(text);  // JSON is YAML
  ASSERT_TRUE(spec.IsMap());
  for (const auto& kv : spec) {
    const std::string key = kv.first.Scalar();
    EXPECT_TRUE(key == "cdiVersion" || key == "kind" || key == "devices" || key == "annotations" ||
                key == "containerEdits")
        << "unexpected top-level key " << key;
  }
  if (spec["containerEdits"]) {  // the spec-wide edits: env, each "NAME=value", and hooks
    for (const auto& kv : spec["containerEdits"]) {
      EXPECT_TRUE(kv.first.Scalar() == "env" || kv.first.Scalar() == "hooks") << kv.first.Scalar();
    }
    for (const auto& env : spec["containerEdits"]["env"]) {
      EXPECT_NE(env.Scalar().find('='), std::string::npos) << env.Scalar();
    }
    for (const auto& hook : spec["containerEdits"]["hooks"]) {  // hookName and path required
      EXPECT_TRUE(hook["hookName"].IsScalar() && hook["path"].IsScalar());
      EXPECT_EQ(hook["path"].Scalar().rfind('/', 0), 0u) << "an absolute path";
    }
  }
  ASSERT_TRUE(spec["cdiVersion"].IsScalar());
  ASSERT_TRUE(spec["kind"].IsScalar());
  const std::string kind = spec["kind"].Scalar();
  const auto slash = kind.find('/');
  ASSERT_NE(slash, std::string::npos);
  EXPECT_EQ(VendorProblem(kind.substr(0, slash)), "");
  EXPECT_EQ(ClassProblem(kind.substr(slash + 1)), "");
  ASSERT_TRUE(spec["devices"].IsSequence());
  for (const auto& dev : spec["devices"]) {
    ASSERT_TRUE(dev["name"].IsScalar());
    EXPECT_EQ(DeviceNameProblem(dev["name"].Scalar()), "");
    ASSERT_TRUE(dev["containerEdits"].IsMap());
    ASSERT_TRUE(dev["containerEdits"]["deviceNodes"].IsSequence());
    for (const auto& node : dev["containerEdits"]["deviceNodes"]) {
      ASSERT_TRUE(node["path"].IsScalar());
      EXPECT_EQ(node["path"].Scalar().rfind("/dev/infiniband/", 0), 0u);
    }
  }
}

TEST(CdiNames, KindsAnnotationKeysAndFiles) {
  EXPECT_EQ(Kind(Resource("rdma", "hca_shared_devices_a")), "rdma/hca_shared_devices_a");
  EXPECT_EQ(Kind(Resource("example.com", "pool1")), "example.com/pool1");
  EXPECT_EQ(AnnotationKey(Resource("rdma", "hca_a")), "cdi.k8s.io/rdmadp_rdma_hca_a");
  EXPECT_NE(AnnotationKey(Resource("a.example", "pool")),
            AnnotationKey(Resource("b.example", "pool")));
  const std::string long_key = AnnotationKey(Resource("rdma", std::string(63, 'a')));
  EXPECT_EQ(long_key.size() - std::string("cdi.k8s.io/").size(), 63u);
  EXPECT_NE(AnnotationKey(Resource("rdma", std::string(62, 'a') + "b")), long_key);
  EXPECT_EQ(SpecFileName(Resource("rdma", "hca_a")), "k8s-rdma-shared-dp_rdma_hca_a.json");
}

TEST(CdiNames, KindProblemsNameTheFieldAndNeverSanitize) {
  config::Config c;
  c.resources = {Resource("rdma", "a"), Resource("x", "hca"), Resource("rdma", "1hca"),
                 Resource("rdma", "r1hca"), Resource("ab", "hc")};
  const auto problems = KindProblems(c);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[0], ::testing::HasSubstr("config: configList[0].resourceName: \"a\" cannot "
                                                "be a CDI class (--use-cdi): must be at least 2"));
  EXPECT_THAT(problems[1], ::testing::HasSubstr("config: configList[1].resourcePrefix: \"x\""));
  EXPECT_THAT(problems[2], ::testing::HasSubstr("configList[2].resourceName: \"1hca\" cannot be a "
                                                "CDI class (--use-cdi): must start with a letter"));
  EXPECT_NE(Kind(c.resources[3]), Kind(c.resources[2])) << "no mapping can merge two kinds";
}

TEST(CdiNames, ParserRules) {
  EXPECT_EQ(VendorProblem("nvidia.com"), "");
  EXPECT_NE(ClassProblem("nvidia.com"), "") << "a class has no dots";
  EXPECT_NE(VendorProblem("-x"), "");
  EXPECT_NE(VendorProblem("1x"), "");
  EXPECT_NE(VendorProblem("x/"), "");
  EXPECT_THAT(VendorProblem("x"), ::testing::HasSubstr("at least 2 characters"));
  EXPECT_THAT(ClassProblem("a"), ::testing::HasSubstr("panics"));
  EXPECT_EQ(ClassProblem("hc"), "");
  EXPECT_EQ(DeviceNameProblem("0000:3b:00.0"), "");
  EXPECT_NE(DeviceNameProblem("a b"), "");
  EXPECT_NE(DeviceNameProblem(""), "");
}

TEST(CdiSpec, ListsEveryHcaWithItsNodesAndRdmaCm) {
  const auto rc = Resource("rdma", "hca_a");
  const std::string text = SpecJson(*Snapshot(rc, 2));
  ExpectValidCdiSpec(text);
  YAML::Node spec = YAML::Load(text);
  EXPECT_EQ(spec["cdiVersion"].Scalar(), "0.5.0");
  EXPECT_EQ(spec["kind"].Scalar(), "rdma/hca_a");
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][1]["name"].Scalar(), "0000:11:00.0");
  std::vector<std::string> paths;
  for (const auto& n : spec["devices"][1]["containerEdits"]["deviceNodes"]) {
    paths.push_back(n["path"].Scalar());
    EXPECT_EQ(n["hostPath"].Scalar(), n["path"].Scalar());
    EXPECT_EQ(n["permissions"].Scalar(), "rwm");
  }
  EXPECT_THAT(paths, ElementsAre("/dev/infiniband/umad1", "/dev/infiniband/uverbs1",
                                 "/dev/infiniband/rdma_cm"));
  ExpectValidCdiSpec(SpecJson(*Snapshot(rc, 0)));  // empty pool: "devices": []
}

// An entry with memlock gets the hook in the spec-wide edits (every container given any of
// the pool's devices), with the byte count; none without the option or without an installed
// hook (docs/memlock.md, "What the plugin does").
TEST(CdiSpec, MemlockAddsTheHookToTheSpecWideEdits) {
  auto rc = Resource("rdma", "hca_a");
  rc.memlock = 64ull << 30;
  const std::string text = SpecJson(*Snapshot(rc, 1), "/var/lib/k8s-rdma-shared-dp/bin/h");
  ExpectValidCdiSpec(text);
  YAML::Node spec = YAML::Load(text);
  const YAML::Node hooks = spec["containerEdits"]["hooks"];
  ASSERT_EQ(hooks.size(), 1u) << text;
  EXPECT_EQ(hooks[0]["hookName"].Scalar(), "createRuntime");
  EXPECT_EQ(hooks[0]["path"].Scalar(), "/var/lib/k8s-rdma-shared-dp/bin/h");
  ASSERT_EQ(hooks[0]["args"].size(), 2u);
  EXPECT_EQ(hooks[0]["args"][0].Scalar(), "rdmadp-memlock-hook");
  EXPECT_EQ(hooks[0]["args"][1].Scalar(), "68719476736");
  EXPECT_TRUE(spec["containerEdits"]["env"].IsSequence()) << "the env stays";
  rc.memlock = config::kMemlockUnlimited;
  EXPECT_EQ(YAML::Load(SpecJson(*Snapshot(rc, 1), "/h"))["containerEdits"]["hooks"][0]["args"][1]
                .Scalar(),
            "unlimited");
  EXPECT_FALSE(YAML::Load(SpecJson(*Snapshot(rc, 1), ""))["containerEdits"]["hooks"]);
  rc.memlock.reset();
  EXPECT_FALSE(YAML::Load(SpecJson(*Snapshot(rc, 1), "/h"))["containerEdits"]["hooks"]);
}

// perHca: the spec names each HCA with its nodes as ever, and carries no env: the Allocate
// answer names the container's own HCAs, which a spec-wide edit (applied after it) would
// replace with the whole pool's. The memlock hook stays.
TEST(CdiSpec, APerHcaSpecCarriesNoPoolWideEnv) {
  auto rc = Resource("rdma", "hca_a");
  rc.device_model = config::DeviceModel::kPerHca;
  rc.env_hints = {config::EnvHint::kNccl};
  const std::string bare = SpecJson(*Snapshot(rc, 2));
  ExpectValidCdiSpec(bare);
  YAML::Node spec = YAML::Load(bare);
  EXPECT_FALSE(spec["containerEdits"]) << bare;
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][1]["containerEdits"]["deviceNodes"].size(), 3u);
  rc.memlock = 64ull << 30;
  const std::string hooked = SpecJson(*Snapshot(rc, 2), "/h");
  ExpectValidCdiSpec(hooked);
  spec = YAML::Load(hooked);
  EXPECT_EQ(spec["containerEdits"]["hooks"].size(), 1u) << hooked;
  EXPECT_FALSE(spec["containerEdits"]["env"]) << hooked;
  rc.device_model = config::DeviceModel::kAuto;  // slots: the pool's env, as before
  EXPECT_TRUE(YAML::Load(SpecJson(*Snapshot(rc, 2), "/h"))["containerEdits"]["env"].IsSequence());
}

// The hook is installed as root's 0755 file, by rename; an identical one is left alone (a
// symlink is never taken for it); a directory others can write to is refused.
TEST(MemlockHookInstall, InstallsOnceAndRefusesADirectoryOthersCanWrite) {
  testing::TempDir tmp;
  const std::string source = tmp.path() + "/built-hook";
  std::ofstream(source) << "\177ELF, as the hook built for the image starts";
  const std::string dir = tmp.path() + "/host-bin";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string dest = dir + "/rdmadp-memlock-hook";
  ASSERT_TRUE(InstallMemlockHook(source, dest).ok());
  struct stat st {};
  ASSERT_EQ(::lstat(dest.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  const ino_t first = st.st_ino;
  ASSERT_TRUE(InstallMemlockHook(source, dest).ok());
  ASSERT_EQ(::lstat(dest.c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, first) << "an identical hook is not rewritten";
  std::filesystem::remove(dest);
  std::filesystem::create_symlink(source, dest);
  ASSERT_TRUE(InstallMemlockHook(source, dest).ok());
  ASSERT_EQ(::lstat(dest.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the symlink is replaced by the hook itself";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1)
      << "no temporary file left";
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  const absl::Status open = InstallMemlockHook(source, dest);
  EXPECT_EQ(open.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(open.message()), ::testing::HasSubstr("writable by others"));
  EXPECT_EQ(InstallMemlockHook(source, tmp.path() + "/missing/hook").code(),
            absl::StatusCode::kNotFound);
}

// H3 of the hardening round at 050f44e: only the hook's own directory was checked, so a
// parent others could write to (ww/ 0777 above a root 0755 hb/) let anyone swap hb/ and
// the hook the runtime runs as root. Every directory from / down is checked, walked without
// following links: root's, and writable by others only if sticky (as /tmp, above the test's
// directory, is).
TEST(MemlockHookInstall, EveryDirectoryOnThePathIsRootsAlone) {
  testing::TempDir tmp;
  const std::string source = tmp.path() + "/built-hook";
  std::ofstream(source) << "\177ELF, as the hook built for the image starts";
  const std::string ww = tmp.path() + "/ww";
  const std::string hb = ww + "/hb";
  ASSERT_EQ(::mkdir(ww.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(hb.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(hb.c_str(), 0755), 0);
  const std::string dest = hb + "/rdmadp-memlock-hook";

  ASSERT_EQ(::chmod(ww.c_str(), 0777), 0);
  absl::Status s = InstallMemlockHook(source, dest);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), ww + " is writable by others than root (mode 0777, not sticky): anyone "
                              "could replace what is in it, and so the hook the runtime runs "
                              "as root");
  EXPECT_FALSE(std::filesystem::exists(dest));

  ASSERT_EQ(::chmod(ww.c_str(), 01777), 0);
  s = InstallMemlockHook(source, dest);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(std::filesystem::is_regular_file(dest));

  const std::string link = tmp.path() + "/link";
  std::filesystem::create_symlink(ww, link);
  s = InstallMemlockHook(source, link + "/hb/rdmadp-memlock-hook");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), link +
                             " is a symbolic link: name the hook's directory by its real "
                             "path (each directory on it is checked, a link's target would "
                             "not be)");

  ASSERT_EQ(::chmod(ww.c_str(), 0755), 0);
  ASSERT_EQ(::chown(ww.c_str(), 65534, 65534), 0);
  s = InstallMemlockHook(source, dest);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), ww + " is owned by uid 65534, not root: its owner could replace the "
                              "hook the runtime runs as root");
}

// H7 of the hardening round at 050f44e: a FIFO where the hook's source belongs blocked the
// start (SIGTERM ignored), and an empty file there was installed as the hook. The FIFO is
// refused without waiting for a writer (in a child that an alarm ends, so a wait fails the
// test instead of hanging it); a source that is not an ELF executable is refused.
TEST(MemlockHookInstall, ASourceThatIsNotTheHookIsRefusedAtOnce) {
  testing::TempDir tmp;
  const std::string dest = tmp.path() + "/rdmadp-memlock-hook";
  const std::string fifo = tmp.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EXIT(
      {
        ::alarm(10);  // a deadline, not a wait: the refusal takes microseconds
        const absl::Status s = InstallMemlockHook(fifo, dest);
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        std::exit(s.code() == absl::StatusCode::kFailedPrecondition &&
                          s.message() == "the hook to install: " + fifo +
                                             " is not a regular file (a FIFO, a device or a "
                                             "directory?)"
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0), "");
  for (const auto& [name, content] : {std::pair<std::string, std::string>{"empty", ""},
                                      {"script", "#!/bin/sh\nexit 0\n"},
                                      {"short", "\177EL"}}) {
    const std::string source = tmp.path() + "/" + name;
    std::ofstream(source) << content;
    const absl::Status s = InstallMemlockHook(source, dest);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << name;
    EXPECT_EQ(s.message(),
              Cat("the hook to install: ", source, " is not an ELF executable (", content.size(),
                  " bytes, no \\x7fELF at the start): not the hook built for "
                  "this image"));
  }
  EXPECT_FALSE(std::filesystem::exists(dest));
}

TEST(CdiSpec, AllocateNamesResolveInTheSpec) {
  const auto rc = Resource("example.com", "pool1");
  auto snap = Snapshot(rc, 3);
  const auto& resp = snap->container_response();
  EXPECT_EQ(resp.devices_size(), 0);  // no DeviceSpecs in CDI mode
  ASSERT_EQ(resp.cdi_devices_size(), 3);
  YAML::Node spec = YAML::Load(SpecJson(*snap));
  std::vector<std::string> in_spec;
  for (const auto& d : spec["devices"]) {
    in_spec.push_back(spec["kind"].Scalar() + "=" + d["name"].Scalar());
  }
  std::vector<std::string> allocated;
  for (const auto& d : resp.cdi_devices()) allocated.push_back(d.name());
  EXPECT_EQ(allocated, in_spec);
  ASSERT_EQ(resp.annotations().count("cdi.k8s.io/rdmadp_example.com_pool1"), 1u);
  EXPECT_EQ(resp.annotations().at("cdi.k8s.io/rdmadp_example.com_pool1"),
            "example.com/pool1=0000:10:00.0,example.com/pool1=0000:11:00.0,"
            "example.com/pool1=0000:12:00.0");
}

TEST(SpecFiles, AtomicWriteAndExactRemoval) {
  testing::TempDir tmp;
  const std::string dir = tmp.path() + "/cdi";
  ASSERT_TRUE(WriteSpecAtomically(dir, "mine.json", "{\"a\": 1}").ok());
  std::ofstream(dir + "/nvidia.com_other.yaml") << "foreign";
  ASSERT_TRUE(WriteSpecAtomically(dir, "mine.json", "{\"a\": 2}").ok());
  std::ifstream in(dir + "/mine.json");
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "{\"a\": 2}");
  ASSERT_TRUE(RemoveSpec(dir, "mine.json").ok());
  ASSERT_TRUE(RemoveSpec(dir, "mine.json").ok());  // already gone is fine
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    left.push_back(e.path().filename());
  EXPECT_THAT(left, ElementsAre("nvidia.com_other.yaml"));  // no temp file, foreign file kept
}

TEST(SpecFiles, PlantedLinksAreNeverWrittenThroughAndTempNamesAreUnique) {
  testing::TempDir tmp;
  const std::string dir = tmp.path() + "/cdi";
  std::filesystem::create_directories(dir);
  const std::string victim = tmp.path() + "/victim";
  std::ofstream(victim) << "precious";
  std::filesystem::create_symlink(victim, dir + "/.mine.json.tmp");  // the old fixed name
  ASSERT_TRUE(WriteSpecAtomically(dir, "mine.json", "{\"a\": 1}").ok());
  std::ifstream in(victim);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "precious");
  EXPECT_TRUE(
      std::filesystem::is_regular_file(std::filesystem::symlink_status(dir + "/mine.json")));
  EXPECT_EQ(std::filesystem::status(dir + "/mine.json").permissions() &
                std::filesystem::perms::others_read,
            std::filesystem::perms::others_read);
}

TEST(SpecFiles, UnwritableDirectoryIsAClearError) {
  absl::Status s = WriteSpecAtomically("/proc/nope", "x.json", "{}");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("--cdi-spec-dir"));
}

}  // namespace
}  // namespace rdmadp::cdi
