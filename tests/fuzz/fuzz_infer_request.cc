// libFuzzer target: the body of a vm_serve infer request (tools/serve/inference_protocol.h).
// The first two bytes choose the Inference-Header-Content-Length header (little-endian;
// 0: absent), the rest is the body. Parsing gives a request or a status; a request's
// tensors hold exactly the bytes their shapes promise, and encoding them as a response
// must succeed.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "objects/allocator.h"
#include "tools/serve/inference_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm;
  using namespace dynvm::tools::serve;
  if (size < 2) return 0;
  static const auto* allocator = new std::shared_ptr<Allocator>(
      MakeNaiveAllocator({.max_allocation_bytes = size_t{64} << 20}));
  const size_t header = data[0] | (size_t{data[1]} << 8);
  const std::string_view body(reinterpret_cast<const char*>(data + 2), size - 2);
  absl::StatusOr<InferRequest> request = ParseInferRequest(
      body, header == 0 ? std::nullopt : std::optional<size_t>(header), *allocator);
  if (!request.ok()) return 0;
  std::vector<InferOutput> outputs;
  for (const InferInput& input : request->inputs) {
    outputs.push_back({.name = input.name, .value = Value(input.tensor), .binary = false});
    outputs.push_back({.name = input.name, .value = Value(input.tensor), .binary = true});
  }
  if (!EncodeInferResponse("fuzz", request->id, outputs).ok()) __builtin_trap();
  return 0;
}
