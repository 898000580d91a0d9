// libFuzzer target: a `.npy` file from a stranger (vm_run --input=x=@file.npy). Parsing
// gives a tensor or a status; a tensor must survive writing and reading back unchanged.
#include <cstdint>
#include <cstring>
#include <string>

#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/string_tensor.h"
#include "serializer/npy.h"

namespace {

// Whether the tensors hold the same elements: the same bytes, or for string tensors
// (whose bytes are pointers) the same texts.
bool SameElements(const dynvm::NDArrayObj& a, const dynvm::NDArrayObj& b) {
  if (a.dtype() != dynvm::DType::kString) return std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const absl::StatusOr<std::string_view> x = dynvm::StringElement(a, i);
    const absl::StatusOr<std::string_view> y = dynvm::StringElement(b, i);
    if (!x.ok() || !y.ok() || *x != *y) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm;
  static const auto* allocator = new std::shared_ptr<Allocator>(
      MakeNaiveAllocator({.max_allocation_bytes = size_t{64} << 20}));
  absl::StatusOr<NDArray> array = serializer::ParseNpy({data, size}, *allocator);
  if (!array.ok()) return 0;
  const absl::StatusOr<std::string> serialized = serializer::SerializeNpy(*array);
  if (!serialized.ok()) __builtin_trap();  // what we read we can write (fuzz inputs are small)
  const std::string& bytes = *serialized;
  absl::StatusOr<NDArray> again = serializer::ParseNpy(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, *allocator);
  if (!again.ok() || (*again)->dtype() != (*array)->dtype() ||
      (*again)->shape() != (*array)->shape() || !SameElements(**array, **again)) {
    __builtin_trap();  // what we write must read back as it was
  }
  return 0;
}
