// Tensors for kernel tests, and running a kernel as the VM does
// (tests/kernels/kernel_test_util.h).
#include "tests/kernels/kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "kernels/api.h"

namespace dynvm::kernels::testing {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  float value;
  if (exp == 0) {
    value = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    value = mant == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits |= sign;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint16_t FloatToHalf(float f) {  // round to nearest even, through the exact float
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(a)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < 6.103515625e-05f) {  // subnormal: a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  int e;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(m * 2048.0f));  // 11 bits
  if (mant == 2048) {
    mant = 1024;
    ++e;
  }
  return sign | static_cast<uint16_t>(((e + 14) << 10) | (mant & 0x3ff));
}

void SetElement(NDArrayObj& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kF32: t.data_as<float>()[i] = static_cast<float>(v); break;
    case DType::kF64: t.data_as<double>()[i] = v; break;
    case DType::kF16: t.data_as<uint16_t>()[i] = FloatToHalf(static_cast<float>(v)); break;
    case DType::kBF16: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      t.data_as<uint16_t>()[i] = static_cast<uint16_t>(bits >> 16);  // exact for test data
      break;
    }
    // Narrower integers through int64, which wraps them (a double out of the target's
    // range converted directly would be undefined: u8 data drawn from [-9, 9), say).
    case DType::kI8: t.data_as<int8_t>()[i] = static_cast<int8_t>(static_cast<int64_t>(v)); break;
    case DType::kI16:
      t.data_as<int16_t>()[i] = static_cast<int16_t>(static_cast<int64_t>(v));
      break;
    case DType::kI32:
      t.data_as<int32_t>()[i] = static_cast<int32_t>(static_cast<int64_t>(v));
      break;
    case DType::kI64: t.data_as<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::kU8: t.data_as<uint8_t>()[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
    case DType::kU16:
      t.data_as<uint16_t>()[i] = static_cast<uint16_t>(static_cast<int64_t>(v));
      break;
    case DType::kU32:
      t.data_as<uint32_t>()[i] = static_cast<uint32_t>(static_cast<int64_t>(v));
      break;
    case DType::kU64:
      t.data_as<uint64_t>()[i] = static_cast<uint64_t>(static_cast<int64_t>(v));
      break;
    case DType::kBool: t.data_as<uint8_t>()[i] = v != 0.0 ? 1 : 0; break;
    case DType::kString: ADD_FAILURE() << "a string tensor has no numeric elements"; break;
  }
}

DType DTypeOf(float) { return DType::kF32; }
DType DTypeOf(double) { return DType::kF64; }
DType DTypeOf(int32_t) { return DType::kI32; }
DType DTypeOf(int64_t) { return DType::kI64; }
DType DTypeOf(bool) { return DType::kBool; }
DType DTypeOf(uint8_t) { return DType::kU8; }
DType DTypeOf(int8_t) { return DType::kI8; }

}  // namespace

template <typename T>
NDArray TensorOf(std::vector<int64_t> shape, std::vector<T> values) {
  NDArray t = *NDArrayObj::Empty(shape, DTypeOf(T{}), MakeNaiveAllocator());
  if (static_cast<int64_t>(values.size()) != t->num_elements()) {  // a typo in a test
    std::fprintf(stderr, "TensorOf: %zu values for shape %s\n", values.size(),
                 ShapeToString(shape).c_str());
    std::abort();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      SetElement(*t, static_cast<int64_t>(i), values[i] ? 1.0 : 0.0);
    } else {  // stored as is: an i64 beyond 2^53 must not go through a double
      t->data_as<T>()[i] = values[i];
    }
  }
  return t;
}

template NDArray TensorOf<float>(std::vector<int64_t>, std::vector<float>);
template NDArray TensorOf<double>(std::vector<int64_t>, std::vector<double>);
template NDArray TensorOf<int32_t>(std::vector<int64_t>, std::vector<int32_t>);
template NDArray TensorOf<int64_t>(std::vector<int64_t>, std::vector<int64_t>);
template NDArray TensorOf<bool>(std::vector<int64_t>, std::vector<bool>);
template NDArray TensorOf<uint8_t>(std::vector<int64_t>, std::vector<uint8_t>);
template NDArray TensorOf<int8_t>(std::vector<int64_t>, std::vector<int8_t>);

NDArray RandomTensor(std::vector<int64_t> shape, DType dtype, std::mt19937& rng, double lo,
                     double hi) {
  NDArray t = *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
  std::uniform_real_distribution<double> dist(lo, hi);
  const bool integral = dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kF16 &&
                        dtype != DType::kBF16;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    const double v = dist(rng);
    SetElement(*t, i, dtype == DType::kBool ? (v > (lo + hi) / 2) : integral ? std::floor(v) : v);
  }
  return t;
}

long double ElementExact(const NDArrayObj& t, int64_t i) {
  if (t.dtype() == DType::kI64) return static_cast<long double>(t.data_as<int64_t>()[i]);
  if (t.dtype() == DType::kU64) return static_cast<long double>(t.data_as<uint64_t>()[i]);
  return ElementAsDouble(t, i);  // exact for every other dtype
}

std::vector<float> RandomFloats(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

double ElementAsDouble(const NDArrayObj& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kF32: return t.data_as<float>()[i];
    case DType::kF64: return t.data_as<double>()[i];
    case DType::kF16: return HalfToFloat(t.data_as<uint16_t>()[i]);
    case DType::kBF16: {
      const uint32_t bits = static_cast<uint32_t>(t.data_as<uint16_t>()[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::kI8: return t.data_as<int8_t>()[i];
    case DType::kI16: return t.data_as<int16_t>()[i];
    case DType::kI32: return t.data_as<int32_t>()[i];
    case DType::kI64: return static_cast<double>(t.data_as<int64_t>()[i]);
    case DType::kU8:
    case DType::kBool: return t.data_as<uint8_t>()[i];
    case DType::kU16: return t.data_as<uint16_t>()[i];
    case DType::kU32: return t.data_as<uint32_t>()[i];
    case DType::kU64: return static_cast<double>(t.data_as<uint64_t>()[i]);
    case DType::kString: ADD_FAILURE() << "a string tensor has no numeric elements"; break;
  }
  return 0.0;
}

absl::StatusOr<std::vector<NDArray>> RunKernel(std::string_view name, const Attrs& attrs,
                                               std::vector<NDArray> inputs,
                                               std::vector<DType> output_dtypes, int num_outputs,
                                               ThreadPool* pool) {
  if (!output_dtypes.empty()) num_outputs = static_cast<int>(output_dtypes.size());
  DYNVM_ASSIGN_OR_RETURN(BoundKernel kernel,
                         DefaultRegistry().Bind(name, attrs, static_cast<int>(inputs.size()),
                                                num_outputs));
  std::vector<NDArrayObj*> args;
  for (const NDArray& in : inputs) args.push_back(in.get());
  std::vector<Shape> shapes(static_cast<size_t>(num_outputs));
  DYNVM_RETURN_IF_ERROR(kernel.InferShapes(args.data(), shapes.data()));
  std::vector<NDArray> outputs;
  for (int i = 0; i < num_outputs; ++i) {
    const DType dtype = output_dtypes.empty() ? inputs.at(0)->dtype() : output_dtypes[i];
    DYNVM_ASSIGN_OR_RETURN(NDArray out, NDArrayObj::Empty(shapes[i], dtype, MakeNaiveAllocator()));
    args.push_back(out.get());
    outputs.push_back(std::move(out));
  }
  DYNVM_RETURN_IF_ERROR(kernel.Call(args.data(), pool ? *pool : ThreadPool::Default()));
  return outputs;
}

bool SameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof(float)) == 0 || (std::isnan(a) && std::isnan(b));
}

void ExpectSameBits(const NDArray& got, const NDArray& want, std::string_view what) {
  ASSERT_EQ(ShapeToString(got->shape()), ShapeToString(want->shape())) << what;
  const float* g = got->data_as<float>();
  const float* w = want->data_as<float>();
  int failures = 0;
  for (int64_t i = 0; i < want->num_elements() && failures < 5; ++i) {
    if (!SameBits(g[i], w[i])) {
      ADD_FAILURE() << what << (what.empty() ? "" : ": ") << "element " << i << " is "
                    << absl::StrFormat("%.9g", g[i]) << ", expected " << absl::StrFormat("%.9g", w[i]);
      ++failures;
    }
  }
}

int ProgramInputCount(std::string_view program) {
  int n = 0;
  for (size_t i = 0; i + 1 < program.size(); ++i) {
    if (program[i] == 'i' && program[i + 1] >= '0' && program[i + 1] <= '9') {
      n = std::max(n, program[i + 1] - '0' + 1);
    }
  }
  return n;
}

std::vector<const Microkernels*> EveryMicrokernelTable() {
  std::vector<const Microkernels*> tables;
  for (Isa isa : kIsas) {
    if (const Microkernels* table = MicrokernelsFor(isa)) tables.push_back(table);
  }
  return tables;
}

std::string MicrokernelTableName(const ::testing::TestParamInfo<const Microkernels*>& info) {
  return std::string(IsaName(info.param->isa));
}

}  // namespace dynvm::kernels::testing
