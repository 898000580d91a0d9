// libFuzzer target: an `.npz` archive from a stranger (vm_compile --const=w.npz). Parsing
// gives arrays or a status, never a crash, and never an allocation past the limit the
// fuzzer's allocator sets (a crafted size must be refused before it is allocated).
#include <cstdint>
#include <memory>
#include <vector>

#include "objects/allocator.h"
#include "serializer/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm;
  static const auto* allocator = new std::shared_ptr<Allocator>(
      MakeNaiveAllocator({.max_allocation_bytes = size_t{64} << 20}));
  absl::StatusOr<std::vector<serializer::NpzEntry>> arrays = serializer::ParseNpz({data, size}, *allocator);
  if (arrays.ok()) {
    for (const serializer::NpzEntry& e : *arrays) {
      if (e.array == nullptr) __builtin_trap();
    }
  }
  return 0;
}
