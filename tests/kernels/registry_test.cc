// The default registry holds every operator the kernel library promises
// (docs/kernels.md), each with a shape function the VM can call.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {
namespace {

// The operators of the kernel library, by family, under their registered (Relay) names.
const char* const kOperators[] = {
    // elementwise unary
    "negative", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid",
    "nn.relu", "nn.leaky_relu", "gelu", "erf", "sin", "cos", "floor", "ceil", "round", "sign",
    "logical_not", "isnan", "clip", "cast", "sinh", "cosh", "asin", "acos", "atan", "asinh",
    "acosh", "atanh",
    // binary with broadcasting
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "mod", "floor_mod",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "where", "left_shift", "right_shift",
    // reductions
    "sum", "mean", "max", "min", "prod", "argmax", "argmin", "l2_norm", "cumsum",
    // normalisation and attention
    "nn.softmax", "nn.log_softmax", "nn.layer_norm", "nn.batch_norm", "nn.attention",
    "nn.varlen_attention", "sequence_positions", "sequence_rows",
    // matrix products
    "matmul", "nn.matmul", "nn.dense", "nn.batch_matmul", "gemm", "layout_transform",
    "nn.contrib_dense_pack",
    // data movement
    "reshape", "squeeze", "expand_dims", "transpose", "concatenate", "split", "strided_slice",
    "take", "gather", "scatter_elements", "broadcast_to", "tile", "nn.pad", "one_hot", "arange",
    "full", "zeros", "ones", "topk", "argsort",
    // data-dependent shapes
    "argwhere", "nonzero", "shape_of", "dyn.strided_slice", "unique", "dyn.reshape",
    "dyn.broadcast_to", "dyn.full", "dyn.zeros", "dyn.ones", "dyn.squeeze", "dyn.expand_dims",
    "dyn.split", "dyn.image.resize2d", "dyn.nn.pad", "dyn.tile", "dyn.topk", "dyn.cumsum", "dyn.sum", "dyn.mean", "dyn.max",
    "dyn.min", "dyn.prod", "dyn.l2_norm",
    // convolution family
    "nn.conv2d", "nn.conv1d", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
    "image.resize2d", "nn.grid_sample",
    // recurrent cells and layers
    "nn.lstm_cell", "nn.gru_cell", "nn.lstm", "nn.gru",
    // detection
    "vision.all_class_non_max_suppression", "vision.roi_align",
    // text
    "text.string_normalizer", "text.tfidf_vectorizer",
};

TEST(KernelLibraryTest, EveryOperatorIsRegisteredWithAShapeFunction) {
  const KernelRegistry& registry = DefaultRegistry();
  for (const char* op : kOperators) {
    const KernelDef* def = registry.Find(op);
    ASSERT_NE(def, nullptr) << op << " is not registered";
    EXPECT_EQ(def->name, op);
    EXPECT_NE(def->shape_fn, nullptr) << op << " has no shape function";
  }
}

TEST(KernelLibraryTest, EveryRegisteredKernelHasAShapeFunction) {
  const KernelRegistry& registry = DefaultRegistry();
  for (const std::string& name : registry.Names()) {
    EXPECT_NE(registry.Find(name)->shape_fn, nullptr) << name;
  }
}

TEST(KernelLibraryTest, NamesAreSortedAndFindIsExact) {
  const std::vector<std::string> names = DefaultRegistry().Names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_GE(names.size(), std::size(kOperators));
  EXPECT_EQ(DefaultRegistry().Find("nn.soft"), nullptr);
  EXPECT_EQ(DefaultRegistry().Find(""), nullptr);
}

}  // namespace
}  // namespace dynvm::kernels
