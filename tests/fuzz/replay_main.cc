// The driver of the fuzz targets in builds without libFuzzer (GCC, Release): runs
// LLVMFuzzerTestOneInput once on every file named, or in a directory named, so that the
// committed seeds and crash regressions run in every test configuration.
//
//   fuzz_npy tests/fuzz/corpus/npy tests/fuzz/regressions/npy
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code error;
    if (!std::filesystem::is_directory(arg, error)) {
      if (!RunFile(arg)) return 1;
      ++runs;
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(arg)) {
      if (!entry.is_regular_file()) continue;
      if (!RunFile(entry.path())) return 1;
      ++runs;
    }
  }
  std::printf("ran %d inputs\n", runs);
  return runs > 0 ? 0 : 1;
}
