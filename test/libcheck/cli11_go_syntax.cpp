// Does CLI11 accept the Go flag syntax the DaemonSets in the field use?
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

int Try(std::vector<std::string> args) {
  CLI::App app{"probe"};
  std::string config = "/k8s-rdma-shared-dev-plugin/config.json", sysfs = "/sys";
  bool use_cdi = false;
  app.add_option("--config-file", config)->envname("RDMADP_CONFIG_FILE");
  app.add_option("--sysfs-root", sysfs)->envname("RDMADP_SYSFS_ROOT");
  app.add_flag("--use-cdi", use_cdi)->envname("RDMADP_USE_CDI");
  std::vector<std::string> argv_s = {"probe"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  std::string line;
  for (auto& a : args) line += a + " ";
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    std::printf("%-40s ok: config=%s sysfs=%s use_cdi=%d\n", line.c_str(), config.c_str(),
                sysfs.c_str(), use_cdi);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::printf("%-40s REFUSED: %s\n", line.c_str(), e.what());
    return 1;
  }
}

int main() {
  int refused = 0;
  refused += Try({"--config-file=/a.json"});
  refused += Try({"--config-file", "/a.json"});
  refused += Try({"-config-file=/a.json"});  // Go: one dash
  refused += Try({"-config-file", "/a.json"});
  refused += Try({"-sysfs-root", "/fake/sys"});
  refused += Try({"-use-cdi"});
  refused += Try({"-use-cdi=false"});  // Go: explicit bool value
  refused += Try({"--use-cdi=false"});
  std::printf("refused %d of 8 (the Go plugin's flag package accepts all 8)\n", refused);
}
