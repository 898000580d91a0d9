#include "tests/compiler/relay_text/corpus_util.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/element_codec.h"

namespace dynvm::compiler::corpus {

NDArray Tensor(DType dtype, const Shape& shape, const Values& values) {
  NDArray t = *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
  EXPECT_EQ(t->num_elements(), static_cast<int64_t>(values.size()));
  for (int64_t i = 0; i < t->num_elements() && i < static_cast<int64_t>(values.size()); ++i) {
    if (IsFloatDType(dtype)) {
      SetFloatElement(*t, i, values[i]);
    } else if (dtype == DType::kBool) {
      SetBoolElement(*t, i, values[i] != 0);
    } else {
      EXPECT_TRUE(SetIntegerElement(*t, i, static_cast<int64_t>(values[i])).ok()) << values[i];
    }
  }
  return t;
}

NDArray Random(const Shape& shape, std::mt19937& rng, double lo, double hi) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::uniform_real_distribution<double> dist(lo, hi);
  Values values(count);
  for (double& v : values) v = static_cast<float>(dist(rng));
  return Tensor(DType::kF32, shape, values);
}

NDArray Scalar(DType dtype, double value) { return Tensor(dtype, {}, {value}); }

Values ValuesOf(const NDArray& t) {
  Values out(t->num_elements());
  for (int64_t i = 0; i < t->num_elements(); ++i) out[i] = ElementAsDouble(*t, i);
  return out;
}

Value MakeList(const std::vector<Value>& items) {
  Value list(ADTObj::Create(1, {}));
  for (auto it = items.rbegin(); it != items.rend(); ++it) list = Value(ADTObj::Create(0, {*it, list}));
  return list;
}

std::vector<Value> ListItems(const Value& list) {
  std::vector<Value> items;
  const ADTObj* node = list.As<ADTObj>();
  while (node != nullptr && node->tag() == 0 && node->size() == 2) {
    items.push_back(node->fields()[0]);
    node = node->fields()[1].As<ADTObj>();
  }
  EXPECT_TRUE(node != nullptr && node->tag() == 1 && node->size() == 0) << "not a List";
  return items;
}

std::optional<Value> Invoke(vm::VirtualMachine& machine, const std::vector<Value>& args,
                            std::string_view function) {
  absl::StatusOr<Value> out = machine.Invoke(function, args);
  if (!out.ok()) {
    ADD_FAILURE() << "@" << function << ": " << out.status();
    return std::nullopt;
  }
  return *std::move(out);
}

std::vector<Value> Fields(const Value& v, size_t size) {
  const ADTObj* adt = v.As<ADTObj>();
  if (adt == nullptr || adt->size() != size) {
    ADD_FAILURE() << "expected a tuple or ADT of " << size << " fields, got "
                  << (adt == nullptr ? std::string("no ADT") : std::to_string(adt->size()) + " fields");
    return std::vector<Value>(size);
  }
  return std::vector<Value>(adt->fields().begin(), adt->fields().end());
}

void ExpectTensor(const Value& got, DType dtype, const Shape& shape, const Values& want, double tolerance) {
  const NDArrayObj* t = got.As<NDArrayObj>();
  ASSERT_NE(t, nullptr) << "expected a tensor";
  ASSERT_EQ(t->dtype(), dtype) << DTypeName(t->dtype());
  ASSERT_EQ(t->shape(), shape);
  ASSERT_EQ(t->num_elements(), static_cast<int64_t>(want.size()));
  const double tol = IsFloatDType(dtype) ? tolerance : 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = ElementAsDouble(*t, static_cast<int64_t>(i));
    ASSERT_LE(std::fabs(e - want[i]), tol * (1 + std::fabs(want[i])))
        << "element " << i << ": got " << e << ", want " << want[i];
  }
}

void ExpectScalar(const Value& got, DType dtype, double want, double tolerance) {
  ExpectTensor(got, dtype, {}, {want}, tolerance);
}

Values Map(const Values& a, const std::function<double(double)>& f) {
  Values out(a.size());
  std::transform(a.begin(), a.end(), out.begin(), f);
  return out;
}

Values Zip(const Values& a, const Values& b, const std::function<double(double, double)>& f) {
  EXPECT_EQ(a.size(), b.size());
  Values out(std::min(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = f(a[i], b[i]);
  return out;
}

Values Columns(const Values& a, int64_t rows, int64_t cols, int64_t begin, int64_t end) {
  Values out;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = begin; j < end; ++j) out.push_back(a[i * cols + j]);
  }
  return out;
}

double Sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

}  // namespace dynvm::compiler::corpus
