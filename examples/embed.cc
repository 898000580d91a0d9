// Embedding dynvm in a C++ program: load an executable, run it on tensors of several
// shapes from one VM, and hand the result to another framework through DLPack.
//
//   build/bin/embed_example dynamic_add.fbs
//
// The executable is examples/dynamic_add.s assembled with vm_as; see docs/embedding.md.
#include <cstdio>
#include <memory>

#include "kernels/api.h"
#include "objects/api.h"
#include "serializer/api.h"
#include "vm/api.h"

namespace {

using dynvm::DType;
using dynvm::NDArray;
using dynvm::NDArrayObj;
using dynvm::Value;

// Loads `path` and runs main on inputs of shape [n, 4] for a few n; any failure is
// returned with the runtime's message.
absl::Status Run(const char* path) {
  // Load once: the Executable is immutable and may be shared by VMs on many threads.
  absl::StatusOr<std::shared_ptr<const dynvm::vm::Executable>> exe =
      dynvm::serializer::LoadExecutable(path, dynvm::kernels::DefaultRegistry());
  if (!exe.ok()) return exe.status();
  // One VM per thread; it keeps its register stack and memory pool across calls.
  dynvm::vm::VirtualMachine machine(*exe);
  std::shared_ptr<dynvm::Allocator> allocator = dynvm::MakePooledAllocator();

  for (int64_t n : {1, 3}) {
    absl::StatusOr<NDArray> x = NDArrayObj::Empty({n, 4}, DType::kF32, allocator);
    absl::StatusOr<NDArray> y = NDArrayObj::Empty({n, 4}, DType::kF32, allocator);
    if (!x.ok()) return x.status();
    if (!y.ok()) return y.status();
    for (int64_t i = 0; i < n * 4; ++i) {
      (*x)->data_as<float>()[i] = static_cast<float>(i);
      (*y)->data_as<float>()[i] = 0.5f;
    }
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(*x), Value(*y)});
    if (!out.ok()) return out.status();

    // Hand the result out without copying, as DLPack. The consumer calls the deleter.
    DLManagedTensor* dl = dynvm::ToDLPack(out->AsRef<NDArrayObj>());
    const float* data = static_cast<const float*>(dl->dl_tensor.data);
    std::printf("n=%lld: shape [%lld, %lld], z[0][0..3] = %g %g %g %g\n",
                static_cast<long long>(n), static_cast<long long>(dl->dl_tensor.shape[0]),
                static_cast<long long>(dl->dl_tensor.shape[1]), data[0], data[1], data[2],
                data[3]);
    dl->deleter(dl);
  }

  // A wrong shape is an error naming the argument, and the VM stays usable.
  absl::StatusOr<NDArray> bad = NDArrayObj::Empty({2, 5}, DType::kF32, allocator);
  if (!bad.ok()) return bad.status();
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(*bad), Value(*bad)});
  std::printf("wrong shape: %s\n", out.status().ToString().c_str());
  absl::StatusOr<Value> count = machine.Invoke("count", {Value::Int(0), Value::Int(1000000)});
  if (!count.ok()) return count.status();
  std::printf("count(0, 1000000) = %lld\n", static_cast<long long>(count->int_value()));
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s exe.fbs\n", argv[0]);
    return 2;
  }
  absl::Status status = Run(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "embed_example: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
