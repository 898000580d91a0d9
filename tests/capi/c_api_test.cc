// The C API (capi/c_api.h) through libdynvm.so, as a C caller sees it: loading, signatures,
// invoking with DLPack tensors without copies, ownership of tensors on every path,
// limits, and a clear error for every bad argument.
#include "capi/c_api.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "serializer/executable_file.h"
#include "serializer/npy.h"
#include "tools/asm/assembler.h"

// tests/capi/c_api_test_c_calls.c
extern "C" DynvmStatus CreateAllocatorOfKind(int kind, DynvmAllocator** out);
extern "C" const char* StatusNameOf(int code);

namespace {

using ::testing::HasSubstr;

// A [n] f32 tensor over memory the test owns; its deleter counts how often it runs.
struct TestTensor {
  explicit TestTensor(std::vector<float> values) : data(std::move(values)) {
    shape[0] = static_cast<int64_t>(data.size());
    managed.dl_tensor.data = data.data();
    managed.dl_tensor.device = {kDLCPU, 0};
    managed.dl_tensor.ndim = 1;
    managed.dl_tensor.dtype = {kDLFloat, 32, 1};
    managed.dl_tensor.shape = shape;
    managed.dl_tensor.strides = nullptr;
    managed.dl_tensor.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<TestTensor*>(self->manager_ctx)->deleted;
    };
  }
  std::vector<float> data;
  int64_t shape[1];
  DLManagedTensor managed{};
  int deleted = 0;
};

// The executable of tests/vm/programs/`name`, assembled and serialized to bytes.
std::string ProgramBytes(const std::string& name) {
  const std::string path = std::string(DYNVM_VM_PROGRAMS) + "/" + name;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<dynvm::vm::ExecutableSpec> spec = dynvm::tools::Assemble(text.str());
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return "";
  absl::StatusOr<std::string> bytes = dynvm::serializer::SerializeExecutable(*spec);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : "";
}

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string bytes = ProgramBytes("c_api.s");
    ASSERT_EQ(dynvm_executable_load_memory(bytes.data(), bytes.size(), &exe_), DYNVM_OK)
        << dynvm_last_error();
    ASSERT_EQ(dynvm_vm_create(exe_, nullptr, &vm_), DYNVM_OK) << dynvm_last_error();
  }
  void TearDown() override {
    dynvm_vm_release(vm_);
    dynvm_executable_release(exe_);
  }

  DynvmExecutable* exe_ = nullptr;
  DynvmVm* vm_ = nullptr;
};

// The library reports the version of the header it was built with.
TEST(CApiVersionTest, LibraryMatchesHeader) {
  EXPECT_STREQ(dynvm_version(), DYNVM_VERSION_STRING);
  EXPECT_EQ(std::string(DYNVM_VERSION_STRING),
            std::to_string(DYNVM_VERSION_MAJOR) + "." + std::to_string(DYNVM_VERSION_MINOR) + "." +
                std::to_string(DYNVM_VERSION_PATCH));
}

TEST_F(CApiTest, ListsFunctionsAndSignatures) {
  size_t n = 0;
  ASSERT_EQ(dynvm_executable_num_functions(exe_, &n), DYNVM_OK);
  EXPECT_EQ(n, 3u);
  size_t index = 0;
  ASSERT_EQ(dynvm_executable_find_function(exe_, "nested", &index), DYNVM_OK);
  const char* name = nullptr;
  ASSERT_EQ(dynvm_executable_function_name(exe_, index, &name), DYNVM_OK);
  EXPECT_STREQ(name, "nested");
  size_t inputs = 0, outputs = 0;
  ASSERT_EQ(dynvm_function_num_inputs(exe_, index, &inputs), DYNVM_OK);
  ASSERT_EQ(dynvm_function_num_outputs(exe_, index, &outputs), DYNVM_OK);
  EXPECT_EQ(inputs, 4u);
  EXPECT_EQ(outputs, 1u);

  DynvmValueSpec spec;
  ASSERT_EQ(dynvm_function_input(exe_, index, 0, &spec), DYNVM_OK);
  EXPECT_STREQ(spec.name, "x");
  EXPECT_STREQ(spec.type, "tensor f32[?]");
  EXPECT_EQ(spec.kind, DYNVM_KIND_TENSOR);
  EXPECT_EQ(spec.dtype.code, kDLFloat);
  EXPECT_EQ(spec.dtype.bits, 32);
  ASSERT_EQ(spec.rank, 1);
  EXPECT_EQ(spec.dims[0], -1);
  EXPECT_STREQ(spec.dim_symbols[0], "?");
  ASSERT_EQ(dynvm_function_input(exe_, index, 1, &spec), DYNVM_OK);
  EXPECT_EQ(spec.kind, DYNVM_KIND_INT);
  EXPECT_EQ(spec.rank, -1);
  ASSERT_EQ(dynvm_function_output(exe_, index, 0, &spec), DYNVM_OK);
  EXPECT_EQ(spec.kind, DYNVM_KIND_ANY);

  EXPECT_EQ(dynvm_function_input(exe_, index, 4, &spec), DYNVM_INVALID_ARGUMENT);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("index 4 out of range: function 'nested' has 4"));
  EXPECT_EQ(dynvm_function_output(exe_, 9, 0, &spec), DYNVM_INVALID_ARGUMENT);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("function index 9 out of range: 3 functions"));
  EXPECT_EQ(dynvm_executable_find_function(exe_, "nope", &index), DYNVM_NOT_FOUND);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("no function named 'nope'"));
}

TEST_F(CApiTest, ResultViewsTheArgumentWithoutCopies) {
  TestTensor x({1, 2, 3});
  DynvmValue arg = dynvm_tensor_value(&x.managed);
  DynvmValue result;
  size_t count = 0;
  ASSERT_EQ(dynvm_vm_invoke(vm_, "identity", &arg, 1, &result, 1, &count), DYNVM_OK)
      << dynvm_last_error();
  ASSERT_EQ(count, 1u);
  ASSERT_EQ(result.kind, DYNVM_KIND_TENSOR);
  EXPECT_EQ(result.tensor->dl_tensor.data, x.data.data());
  EXPECT_EQ(result.tensor->dl_tensor.shape[0], 3);
  // dynvm took the argument over; it lets go only when the result does.
  EXPECT_EQ(x.deleted, 0);
  dynvm_value_release(&result);
  EXPECT_EQ(result.tensor, nullptr);
  EXPECT_EQ(x.deleted, 1);
  dynvm_value_release(&result);  // released values are empty: a second release is a no-op
  EXPECT_EQ(x.deleted, 1);
}

TEST_F(CApiTest, NestedResultsFlattenDepthFirst) {
  TestTensor x({4, 5});
  DynvmValue args[] = {dynvm_tensor_value(&x.managed), dynvm_int_value(-7),
                       dynvm_float_value(2.5), dynvm_bool_value(1)};
  DynvmValue results[4];
  size_t count = 0;
  ASSERT_EQ(dynvm_vm_invoke(vm_, "nested", args, 4, results, 2, &count), DYNVM_OUT_OF_RANGE);
  EXPECT_EQ(count, 4u);  // the room needed
  EXPECT_THAT(dynvm_last_error(), HasSubstr("returns 4 values but results has room for 2"));
  EXPECT_EQ(x.deleted, 1);

  TestTensor y({4, 5});
  args[0] = dynvm_tensor_value(&y.managed);
  ASSERT_EQ(dynvm_vm_invoke(vm_, "nested", args, 4, results, 4, &count), DYNVM_OK)
      << dynvm_last_error();
  ASSERT_EQ(count, 4u);
  EXPECT_EQ(results[0].kind, DYNVM_KIND_TENSOR);
  EXPECT_EQ(results[0].tensor->dl_tensor.data, y.data.data());
  EXPECT_EQ(results[1].kind, DYNVM_KIND_INT);
  EXPECT_EQ(results[1].i, -7);
  EXPECT_EQ(results[2].kind, DYNVM_KIND_FLOAT);
  EXPECT_EQ(results[2].f, 2.5);
  EXPECT_EQ(results[3].kind, DYNVM_KIND_BOOL);
  EXPECT_EQ(results[3].i, 1);
  for (DynvmValue& r : results) dynvm_value_release(&r);
  EXPECT_EQ(y.deleted, 1);
}

TEST_F(CApiTest, BadArgumentsAreErrorsAndTensorsAreReleasedOnce) {
  DynvmValue result;
  size_t count = 0;
  {
    // A tensor of the wrong dtype: the signature check names the argument.
    TestTensor x({1, 2});
    x.managed.dl_tensor.dtype = {kDLInt, 32, 1};
    DynvmValue arg = dynvm_tensor_value(&x.managed);
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", &arg, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(), HasSubstr("argument 0 ('x')"));
    EXPECT_THAT(dynvm_last_error(), HasSubstr("f32"));
    EXPECT_EQ(x.deleted, 1);
  }
  {
    // A tensor DLPack cannot describe to us (non-CPU), then one that was not reached.
    TestTensor gpu({1}), later({2});
    gpu.managed.dl_tensor.device = {kDLCUDA, 0};
    DynvmValue args[] = {dynvm_tensor_value(&gpu.managed), dynvm_int_value(1),
                         dynvm_float_value(0.5), dynvm_tensor_value(&later.managed)};
    EXPECT_EQ(dynvm_vm_invoke(vm_, "nested", args, 4, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(),
                HasSubstr("input 'x' (argument 0 of 'nested'): DLPack tensor on device type 2"));
    EXPECT_EQ(gpu.deleted, 1);
    EXPECT_EQ(later.deleted, 1);
  }
  {
    // Wrong count, unknown function, a kind C values cannot have.
    TestTensor x({1}), y({1}), z({1});
    DynvmValue two[] = {dynvm_tensor_value(&x.managed), dynvm_int_value(1)};
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", two, 2, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(),
                HasSubstr("too many inputs: 'identity' takes 1 (x) but args[1] would be argument 1"));
    DynvmValue one = dynvm_tensor_value(&y.managed);
    EXPECT_EQ(dynvm_vm_invoke(vm_, "nope", &one, 1, &result, 1, &count), DYNVM_NOT_FOUND);
    DynvmValue bad = dynvm_tensor_value(&z.managed);
    bad.kind = DYNVM_KIND_TUPLE;
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", &bad, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(), HasSubstr("(argument 0 of 'identity'): kind 5 is not a tensor"));
    // Any int, as a C caller may store in the enum (C++ could not load it as one).
    const int32_t garbage = 1000;
    std::memcpy(&bad.kind, &garbage, sizeof garbage);
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", &bad, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(),
                HasSubstr("(argument 0 of 'identity'): kind 1000 is not a tensor"));
    EXPECT_EQ(x.deleted + y.deleted, 2);
    EXPECT_EQ(z.deleted, 0);  // not a tensor value: not dynvm's to release
  }
  {
    // The same managed tensor twice would be released twice: refused, released once.
    TestTensor x({1, 2});
    DynvmValue twice[] = {dynvm_tensor_value(&x.managed), dynvm_int_value(1),
                          dynvm_float_value(0.5), dynvm_tensor_value(&x.managed)};
    EXPECT_EQ(dynvm_vm_invoke(vm_, "nested", twice, 4, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(),
                HasSubstr("argument 3 is the same DLManagedTensor as argument 0"));
    EXPECT_EQ(x.deleted, 1);
  }
  {
    // Malformed DLTensors: a null shape for rank 1, null data for 2 elements.
    TestTensor no_shape({1, 2}), no_data({1, 2});
    no_shape.managed.dl_tensor.shape = nullptr;
    no_data.managed.dl_tensor.data = nullptr;
    DynvmValue arg = dynvm_tensor_value(&no_shape.managed);
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", &arg, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(), HasSubstr("DLPack tensor of rank 1 has no shape"));
    arg = dynvm_tensor_value(&no_data.managed);
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", &arg, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(), HasSubstr("DLPack tensor f32[2] has no data"));
    EXPECT_EQ(no_shape.deleted + no_data.deleted, 2);
  }
  {
    // Null pointers: an error, and the tensors handed in are still released.
    TestTensor x({1});
    DynvmValue arg = dynvm_tensor_value(&x.managed);
    EXPECT_EQ(dynvm_vm_invoke(nullptr, "identity", &arg, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_EQ(x.deleted, 1);
    EXPECT_EQ(dynvm_vm_invoke(vm_, "identity", nullptr, 1, &result, 1, &count),
              DYNVM_INVALID_ARGUMENT);
    EXPECT_THAT(dynvm_last_error(), HasSubstr("args is null"));
  }
  // A result C cannot hold.
  EXPECT_EQ(dynvm_vm_invoke(vm_, "string", nullptr, 0, &result, 1, &count), DYNVM_UNIMPLEMENTED);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("result 0 is string, which the C API cannot return"));
  // After all that, the VM still runs.
  TestTensor x({7});
  DynvmValue arg = dynvm_tensor_value(&x.managed);
  ASSERT_EQ(dynvm_vm_invoke(vm_, "identity", &arg, 1, &result, 1, &count), DYNVM_OK)
      << dynvm_last_error();
  EXPECT_EQ(static_cast<const float*>(result.tensor->dl_tensor.data)[0], 7.0f);
  dynvm_value_release(&result);
  EXPECT_EQ(x.deleted, 1);
}

TEST_F(CApiTest, LoadErrorsNameTheProblem) {
  DynvmExecutable* exe = nullptr;
  EXPECT_EQ(dynvm_executable_load_file("/nonexistent/exe.fbs", &exe), DYNVM_NOT_FOUND);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("/nonexistent/exe.fbs"));
  EXPECT_EQ(dynvm_executable_load_file(nullptr, &exe), DYNVM_INVALID_ARGUMENT);
  const char junk[] = "not an executable at all, just text";
  EXPECT_NE(dynvm_executable_load_memory(junk, sizeof(junk), &exe), DYNVM_OK);
  EXPECT_STRNE(dynvm_last_error(), "");
  EXPECT_EQ(dynvm_executable_load_memory(nullptr, 10, &exe), DYNVM_INVALID_ARGUMENT);
  EXPECT_EQ(exe, nullptr);  // untouched by every failure
  EXPECT_STREQ(dynvm_status_name(DYNVM_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
  EXPECT_STREQ(StatusNameOf(99), "UNKNOWN_STATUS_CODE");
}

TEST_F(CApiTest, OptionsThreadPoolsAllocatorsAndLimits) {
  DynvmThreadPool* pool = nullptr;
  EXPECT_EQ(dynvm_thread_pool_create(0, &pool), DYNVM_INVALID_ARGUMENT);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("num_threads must be in [1, 1024], got 0"));
  ASSERT_EQ(dynvm_thread_pool_create(2, &pool), DYNVM_OK);
  DynvmAllocator* allocator = nullptr;
  EXPECT_EQ(CreateAllocatorOfKind(7, &allocator), DYNVM_INVALID_ARGUMENT);
  ASSERT_EQ(dynvm_allocator_create(DYNVM_ALLOCATOR_POOLED, 1 << 20, &allocator), DYNVM_OK);

  DynvmVmOptions options;
  dynvm_vm_options_init(&options);
  EXPECT_EQ(options.max_call_depth, 10000u);
  options.timeout_us = 2000;
  options.thread_pool = pool;
  options.allocator = allocator;
  DynvmVm* vm = nullptr;
  options.max_call_depth = 0;
  EXPECT_EQ(dynvm_vm_create(exe_, &options, &vm), DYNVM_INVALID_ARGUMENT);
  options.max_call_depth = 100;
  // sum_loop.s: a loop long enough to meet a deadline.
  const std::string bytes = ProgramBytes("sum_loop.s");
  DynvmExecutable* loop = nullptr;
  ASSERT_EQ(dynvm_executable_load_memory(bytes.data(), bytes.size(), &loop), DYNVM_OK)
      << dynvm_last_error();
  ASSERT_EQ(dynvm_vm_create(loop, &options, &vm), DYNVM_OK);
  dynvm_executable_release(loop);  // the VM holds it
  // The VM holds what it uses: release the handles first.
  dynvm_thread_pool_release(pool);

  DynvmValue result;
  size_t count = 0;
  DynvmValue long_loop[] = {dynvm_int_value(1), dynvm_int_value(int64_t{1} << 50),
                            dynvm_int_value(0)};
  EXPECT_EQ(dynvm_vm_invoke(vm, "sum", long_loop, 3, &result, 1, &count),
            DYNVM_DEADLINE_EXCEEDED);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("deadline exceeded"));
  DynvmValue short_loop[] = {dynvm_int_value(1), dynvm_int_value(10), dynvm_int_value(0)};
  ASSERT_EQ(dynvm_vm_invoke(vm, "sum", short_loop, 3, &result, 1, &count), DYNVM_OK);
  EXPECT_EQ(result.i, 55);

  // Per-call limits instead of the VM's: a generous timeout lets the 2 ms-limited VM run
  // 10^7 steps (tens of ms); a tiny one stops it; bad limits are refused and release
  // the arguments.
  DynvmValue medium_loop[] = {dynvm_int_value(1), dynvm_int_value(10'000'000),
                              dynvm_int_value(0)};
  ASSERT_EQ(dynvm_vm_invoke_with_limits(vm, "sum", medium_loop, 3, &result, 1, &count,
                                        /*timeout_us=*/60'000'000, /*max_memory_bytes=*/0),
            DYNVM_OK)
      << dynvm_last_error();
  EXPECT_EQ(result.i, int64_t{50'000'005'000'000});
  EXPECT_EQ(dynvm_vm_invoke_with_limits(vm, "sum", long_loop, 3, &result, 1, &count,
                                        /*timeout_us=*/1000, /*max_memory_bytes=*/0),
            DYNVM_DEADLINE_EXCEEDED);
  TestTensor x({1});
  DynvmValue arg = dynvm_tensor_value(&x.managed);
  EXPECT_EQ(dynvm_vm_invoke_with_limits(vm, "sum", &arg, 1, &result, 1, &count, -1, 0),
            DYNVM_INVALID_ARGUMENT);
  EXPECT_THAT(dynvm_last_error(), HasSubstr("timeout_us and max_memory_bytes must be >= 0"));
  EXPECT_EQ(x.deleted, 1);

  DynvmAllocatorStats stats;
  ASSERT_EQ(dynvm_allocator_stats(allocator, &stats), DYNVM_OK);
  EXPECT_EQ(stats.bytes_live, 0);
  dynvm_allocator_release(allocator);
  dynvm_vm_release(vm);
}

// tests/models/bert/bert_mini.onnx compiled by the ctest fixture, run on PyTorch's inputs.
// The tiny BERT (compiled with native code) against PyTorch's outputs, its native code
// trusted and not: untrusted, the fused programs run on the evaluator, within the same
// bound.
class CApiBertTest : public ::testing::TestWithParam<int> {};

TEST_P(CApiBertTest, MatchesPyTorch) {
  DynvmLoadOptions options;
  dynvm_load_options_init(&options);
  EXPECT_EQ(options.trust_native_code, 0);
  options.trust_native_code = GetParam();
  DynvmExecutable* exe = nullptr;
  ASSERT_EQ(dynvm_executable_load_file_with_options(DYNVM_BERT_MINI_EXE, &options, &exe), DYNVM_OK)
      << dynvm_last_error();
  int ignored = -1;
  ASSERT_EQ(dynvm_executable_native_code_ignored(exe, &ignored), DYNVM_OK);
  EXPECT_EQ(ignored, GetParam() ? 0 : 1);
  EXPECT_EQ(dynvm_executable_native_code_ignored(nullptr, &ignored), DYNVM_INVALID_ARGUMENT);
  size_t main_index = 0, num_inputs = 0;
  ASSERT_EQ(dynvm_executable_find_function(exe, "main", &main_index), DYNVM_OK);
  ASSERT_EQ(dynvm_function_num_inputs(exe, main_index, &num_inputs), DYNVM_OK);
  DynvmValueSpec spec;
  ASSERT_EQ(dynvm_function_input(exe, main_index, 0, &spec), DYNVM_OK);
  EXPECT_EQ(spec.dtype.code, kDLInt);
  ASSERT_EQ(spec.rank, 2);
  EXPECT_STRNE(spec.dim_symbols[0], "?");  // the ONNX dim_param names survive

  DynvmVm* vm = nullptr;
  ASSERT_EQ(dynvm_vm_create(exe, nullptr, &vm), DYNVM_OK);
  const std::string golden = std::string(DYNVM_BERT_GOLDEN) + "/b2_s7_";
  const std::shared_ptr<dynvm::Allocator> allocator = dynvm::MakeNaiveAllocator();
  std::vector<DynvmValue> args;
  for (size_t i = 0; i < num_inputs; ++i) {
    ASSERT_EQ(dynvm_function_input(exe, main_index, i, &spec), DYNVM_OK);
    absl::StatusOr<dynvm::NDArray> x =
        dynvm::serializer::ReadNpyFile(golden + spec.name + ".npy", allocator);
    ASSERT_TRUE(x.ok()) << x.status();
    args.push_back(dynvm_tensor_value(dynvm::ToDLPack(*x)));
  }
  DynvmValue results[2];
  size_t count = 0;
  ASSERT_EQ(dynvm_vm_invoke(vm, "main", args.data(), args.size(), results, 2, &count), DYNVM_OK)
      << dynvm_last_error();
  ASSERT_EQ(count, 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(dynvm_function_output(exe, main_index, i, &spec), DYNVM_OK);
    absl::StatusOr<dynvm::NDArray> expected =
        dynvm::serializer::ReadNpyFile(golden + spec.name + ".npy", allocator);
    ASSERT_TRUE(expected.ok()) << expected.status();
    const DLTensor& got = results[i].tensor->dl_tensor;
    ASSERT_EQ(got.ndim, static_cast<int32_t>((*expected)->shape().size()));
    for (int d = 0; d < got.ndim; ++d) EXPECT_EQ(got.shape[d], (*expected)->shape()[d]);
    // Issue 5's bound for the real models: max |diff| <= 1e-4.
    double max_diff = 0;
    const float* g = static_cast<const float*>(got.data);
    const float* e = (*expected)->data_as<float>();
    for (int64_t k = 0; k < (*expected)->num_elements(); ++k) {
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(g[k] - e[k])));
    }
    EXPECT_LE(max_diff, 1e-4) << spec.name;
    dynvm_value_release(&results[i]);
  }
  dynvm_vm_release(vm);
  dynvm_executable_release(exe);
}

INSTANTIATE_TEST_SUITE_P(Trust, CApiBertTest, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param ? "NativeTrusted" : "NativeNotTrusted";
                         });

}  // namespace
