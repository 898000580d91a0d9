// Every operator's type relation (compiler/ops/op_registry.h) against the kernel that
// computes it: at random concrete shapes (0- and 1-sized extents included, and shapes
// that do not fit), the relation accepts exactly what the kernel's shape function
// accepts (for operators whose shapes depend on values, at least what the types can
// tell) and gives the shape it gives, `?` standing for what only values tell; and with
// an extent replaced everywhere by a symbol, the relation's type, the symbol bound
// back, is the concrete one (where it does not say `?`). Every kernel of the library
// has a relation.
#include "compiler/ops/op_registry.h"

#include <cstring>
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/data_movement/text.h"
#include "kernels/elementwise/native_elementwise.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

using Shape = std::vector<int64_t>;

struct Case {
  std::vector<std::pair<DType, Shape>> args;
  kernels::Attrs attrs;
  int num_outputs = 1;  // the kernel's outputs (a relation gives a tuple for several)
  // Element values of the arguments whose shapes depend on them (dyn.*, nonzero...), by
  // position; other arguments are zeros.
  std::map<int, std::vector<double>> values = {};
};
using Generator = std::function<Case(std::mt19937&)>;

int64_t Rand(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
Shape RandShape(std::mt19937& rng, int min_rank, int max_rank) {
  Shape s(Rand(rng, min_rank, max_rank));
  for (int64_t& d : s) d = Rand(rng, 0, 4) == 0 ? Rand(rng, 0, 1) : Rand(rng, 2, 5);
  return s;
}
// `s` with some extents replaced by 1 or dropped from the front (broadcastable to s),
// and now and then one that is not.
Shape BroadcastPartner(std::mt19937& rng, Shape s) {
  if (!s.empty() && Rand(rng, 0, 2) == 0) s.erase(s.begin(), s.begin() + Rand(rng, 1, s.size()));
  for (int64_t& d : s) {
    if (Rand(rng, 0, 3) == 0) d = 1;
  }
  if (!s.empty() && Rand(rng, 0, 9) == 0) s[Rand(rng, 0, s.size() - 1)] = 7;
  return s;
}

Generator Unary(DType dtype, kernels::Attrs attrs = {}) {
  return [=](std::mt19937& rng) { return Case{{{dtype, RandShape(rng, 0, 4)}}, attrs}; };
}
// Two broadcasting operands of one dtype drawn from `dtypes`, so that the dtypes the
// relation accepts are checked against the kernel's as well as the shapes.
Generator Binary(std::vector<DType> dtypes) {
  return [=](std::mt19937& rng) {
    Shape a = RandShape(rng, 0, 4);
    Shape b = BroadcastPartner(rng, a);
    if (Rand(rng, 0, 1)) std::swap(a, b);
    const DType dtype = dtypes[Rand(rng, 0, dtypes.size() - 1)];
    return Case{{{dtype, a}, {dtype, b}}, {}};
  };
}
Generator Reduce(DType dtype) {
  return [=](std::mt19937& rng) {
    const Shape s = RandShape(rng, 1, 4);
    kernels::Attrs attrs;
    if (Rand(rng, 0, 3) != 0) {
      std::vector<int64_t> axes;
      for (int64_t a = -static_cast<int64_t>(s.size()); a < static_cast<int64_t>(s.size()); ++a) {
        if (Rand(rng, 0, 3) == 0) axes.push_back(a);
      }
      if (axes.size() == 1 && Rand(rng, 0, 1)) {
        attrs["axis"] = axes[0];
      } else {
        attrs["axis"] = axes;
      }
      attrs["exclude"] = Rand(rng, 0, 3) == 0 ? int64_t{1} : int64_t{0};
    }
    attrs["keepdims"] = Rand(rng, 0, 1);
    return Case{{{dtype, s}}, attrs};
  };
}

const std::map<std::string, Generator>& Generators() {
  static const auto* const gens = [] {
    auto* g = new std::map<std::string, Generator>;
    for (const char* op : {"negative", "abs", "sign"}) (*g)[op] = Unary(DType::kI64);
    for (const char* op : {"exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf",
                           "sin", "cos", "floor", "ceil", "round", "nn.relu", "nn.leaky_relu",
                           "gelu", "isnan", "sinh", "cosh", "asin", "acos", "atan", "asinh",
                           "acosh", "atanh"}) {
      (*g)[op] = Unary(DType::kF32);
    }
    (*g)["clip"] = Unary(DType::kF32, {{"a_min", -1.0}, {"a_max", 1.0}});
    (*g)["logical_not"] = Unary(DType::kBool);
    (*g)["cast"] = Unary(DType::kF32, {{"dtype", std::string("int32")}});
    // Every dtype, f32 most often.
    std::vector<DType> dtypes = {DType::kF32, DType::kF32, DType::kF32};
    for (int d = 0; d < kNumDTypes; ++d) dtypes.push_back(static_cast<DType>(d));
    for (const char* op : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
                           "mod", "floor_mod", "equal", "not_equal", "less", "less_equal",
                           "greater", "greater_equal"}) {
      (*g)[op] = Binary(dtypes);
    }
    for (const char* op : {"left_shift", "right_shift"}) {
      (*g)[op] = Binary({DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI32, DType::kF32});
    }
    for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
      (*g)[op] = Binary({DType::kBool, DType::kBool, DType::kBool, DType::kF32, DType::kU8});
    }
    // Three inputs broadcast together, each read by the program.
    (*g)["fused_elementwise"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      return Case{{{DType::kF32, s}, {DType::kF32, BroadcastPartner(rng, s)},
                   {DType::kF32, BroadcastPartner(rng, s)}},
                  {{"program", std::string("t0 = add(i0, i1); t1 = multiply(t0, i2)")}}};
    };
    (*g)["nn.bias_add"] = [](std::mt19937& rng) {  // a bias along any axis, now and then the default
      const Shape s = RandShape(rng, 1, 4);
      const int64_t axis = Rand(rng, -static_cast<int64_t>(s.size()), static_cast<int64_t>(s.size()) - 1);
      const size_t at = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis);
      if (s.size() >= 2 && Rand(rng, 0, 3) == 0) return Case{{{DType::kF32, s}, {DType::kF32, {s[1]}}}, {}};
      return Case{{{DType::kI32, s}, {DType::kI32, {s[at]}}}, {{"axis", axis}}};
    };
    (*g)["where"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      return Case{{{DType::kBool, BroadcastPartner(rng, s)}, {DType::kF32, s},
                   {DType::kF32, BroadcastPartner(rng, s)}}, {}};
    };
    for (const char* op : {"sum", "prod", "max", "min", "argmax", "argmin"}) (*g)[op] = Reduce(DType::kI32);
    for (const char* op : {"mean", "l2_norm"}) (*g)[op] = Reduce(DType::kF32);
    (*g)["det"] = [](std::mt19937& rng) {  // square matrices, now and then not
      Shape s = RandShape(rng, 0, 2);
      const int64_t n = Rand(rng, 0, 3);
      s.push_back(n);
      s.push_back(Rand(rng, 0, 4) == 0 ? n + 1 : n);
      return Case{{{DType::kF32, s}}, {}};
    };
    for (const char* op : {"nn.softmax", "nn.log_softmax"}) {
      (*g)[op] = [](std::mt19937& rng) {
        const Shape s = RandShape(rng, 0, 3);
        return Case{{{DType::kF32, s}}, {{"axis", Rand(rng, -4, 3)}}};
      };
    }
    (*g)["nn.layer_norm"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      const int64_t axis = Rand(rng, -static_cast<int64_t>(s.size()), s.size() - 1);
      int64_t n = s[axis < 0 ? axis + s.size() : axis];
      if (Rand(rng, 0, 9) == 0) n += 1;
      return Case{{{DType::kF32, s}, {DType::kF32, {n}}, {DType::kF32, {n}}}, {{"axis", axis}}};
    };
    (*g)["nn.dense"] = [](std::mt19937& rng) {
      Shape x = RandShape(rng, 1, 3);
      const int64_t n = Rand(rng, 0, 5);
      const int64_t k = Rand(rng, 0, 9) == 0 ? x.back() + 1 : x.back();
      Case c{{{DType::kF32, x}, {DType::kF32, {n, k}}}, {}};
      if (Rand(rng, 0, 1)) c.args.push_back({DType::kF32, {Rand(rng, 0, 9) == 0 ? n + 1 : n}});
      if (Rand(rng, 0, 2) == 0) c.attrs["units"] = Rand(rng, 0, 9) == 0 ? n + 2 : n;
      return c;
    };
    (*g)["nn.batch_matmul"] = [](std::mt19937& rng) {
      Shape batch = RandShape(rng, 0, 2);
      const int64_t m = Rand(rng, 0, 4), k = Rand(rng, 0, 4), n = Rand(rng, 0, 4);
      const bool ta = Rand(rng, 0, 1), tb = Rand(rng, 0, 1);
      Shape a = batch, b = BroadcastPartner(rng, batch);
      a.insert(a.end(), {ta ? k : m, ta ? m : k});
      const int64_t kb = Rand(rng, 0, 9) == 0 ? k + 1 : k;
      b.insert(b.end(), {tb ? n : kb, tb ? kb : n});
      return Case{{{DType::kF32, a}, {DType::kF32, b}},
                  {{"transpose_a", int64_t{ta}}, {"transpose_b", int64_t{tb}}}};
    };
    (*g)["reshape"] = [](std::mt19937& rng) {
      const Shape s = {Rand(rng, 1, 3), Rand(rng, 1, 3) * 2, Rand(rng, 1, 4)};
      static const std::vector<std::vector<int64_t>> kShapes = {
          {-1}, {0, -1}, {-1, 0}, {0, 0, 0}, {-2}, {-3, 0}, {0, -3}, {-4, -1, 2, -2},
          {0, -4, 2, -1, 0}, {-1, 4}, {2, -1}, {3, 5, 7}, {0, 0, -1}, {-1, -1}, {-5}};
      return Case{{{DType::kF32, s}}, {{"newshape", kShapes[Rand(rng, 0, kShapes.size() - 1)]}}};
    };
    (*g)["transpose"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 4);
      std::vector<int64_t> axes(s.size());
      for (size_t i = 0; i < axes.size(); ++i) axes[i] = i;
      std::shuffle(axes.begin(), axes.end(), rng);
      if (!axes.empty() && Rand(rng, 0, 9) == 0) axes[0] = axes.back();
      kernels::Attrs attrs;
      if (Rand(rng, 0, 4) != 0) attrs["axes"] = axes;
      return Case{{{DType::kF32, s}}, attrs};
    };
    (*g)["expand_dims"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      return Case{{{DType::kF32, s}},
                  {{"axis", Rand(rng, -5, 4)}, {"num_newaxis", Rand(rng, 0, 2)}}};
    };
    (*g)["squeeze"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 4);
      kernels::Attrs attrs;
      if (!s.empty() && Rand(rng, 0, 2) != 0) attrs["axis"] = std::vector<int64_t>{Rand(rng, 0, s.size() - 1)};
      return Case{{{DType::kF32, s}}, attrs};
    };
    (*g)["concatenate"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      const int64_t axis = Rand(rng, 0, s.size() - 1);
      Case c{{}, {{"axis", axis}}};
      for (int64_t i = Rand(rng, 1, 3); i > 0; --i) {
        Shape t = s;
        t[axis] = Rand(rng, 0, 3);
        if (Rand(rng, 0, 9) == 0) t[(axis + 1) % t.size()] += 1;
        c.args.push_back({DType::kF32, t});
      }
      return c;
    };
    (*g)["take"] = [](std::mt19937& rng) {
      const Shape data = RandShape(rng, 1, 3);
      Shape indices = RandShape(rng, 0, 2);
      kernels::Attrs attrs;
      if (Rand(rng, 0, 3) != 0) attrs["axis"] = Rand(rng, -static_cast<int64_t>(data.size()), data.size() - 1);
      // Out-of-range indices are a run-time matter; the shapes are what is checked.
      return Case{{{DType::kF32, data}, {DType::kI64, indices}}, attrs};
    };
    for (const char* op : {"nn.matmul", "matmul"}) {
      (*g)[op] = [](std::mt19937& rng) {
        Shape batch = RandShape(rng, 0, 2);
        const int64_t m = Rand(rng, 0, 4), k = Rand(rng, 0, 4), n = Rand(rng, 0, 4);
        Shape a = batch, b = BroadcastPartner(rng, batch);
        const bool ta = Rand(rng, 0, 3) == 0, tb = Rand(rng, 0, 3) == 0;
        a.insert(a.end(), {ta ? k : m, ta ? m : k});
        b.insert(b.end(), {tb ? n : k, tb ? k : n});
        if (Rand(rng, 0, 3) == 0) a = {k};  // 1-D operands are promoted
        if (Rand(rng, 0, 3) == 0) b = {Rand(rng, 0, 9) == 0 ? k + 1 : k};
        return Case{{{DType::kF32, a}, {DType::kF32, b}},
                    {{"transpose_a", int64_t{ta}}, {"transpose_b", int64_t{tb}}}};
      };
    }
    (*g)["gemm"] = [](std::mt19937& rng) {
      const int64_t m = Rand(rng, 0, 4), k = Rand(rng, 0, 4), n = Rand(rng, 0, 4);
      const bool ta = Rand(rng, 0, 1), tb = Rand(rng, 0, 1), residual = Rand(rng, 0, 1);
      Case c{{{DType::kF32, ta ? Shape{k, m} : Shape{m, k}},
              {DType::kF32, tb ? Shape{n, Rand(rng, 0, 9) == 0 ? k + 1 : k} : Shape{k, n}}},
             {{"trans_a", int64_t{ta}}, {"trans_b", int64_t{tb}}, {"residual", int64_t{residual}}}};
      if (Rand(rng, 0, 1)) c.args.push_back({DType::kF32, {n}});
      if (residual) c.args.push_back({DType::kF32, {m, Rand(rng, 0, 9) == 0 ? n + 1 : n}});
      return c;
    };
    (*g)["nn.batch_norm"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 4);
      const int64_t axis = Rand(rng, 0, s.size() - 1);
      Case c{{{DType::kF32, s}}, {{"axis", axis}}};
      for (int i = 0; i < 4; ++i) c.args.push_back({DType::kF32, {Rand(rng, 0, 19) == 0 ? s[axis] + 1 : s[axis]}});
      return c;
    };
    (*g)["layout_transform"] = [](std::mt19937& rng) {
      return Case{{{DType::kF32, RandShape(rng, 2, Rand(rng, 0, 9) == 0 ? 3 : 2)}},
                  {{"src_layout", std::string("NC")}, {"dst_layout", std::string("NC16n")}}};
    };
    (*g)["nn.contrib_dense_pack"] = [](std::mt19937& rng) {
      const Shape x = RandShape(rng, 1, 3);
      const int64_t n = Rand(rng, 1, 40), panels = (n + 15) / 16;
      Case c{{{DType::kF32, x}, {DType::kF32, {panels, Rand(rng, 0, 9) == 0 ? x.back() + 1 : x.back(), 16}}}, {}};
      if (Rand(rng, 0, 1)) c.attrs["units"] = Rand(rng, 0, 9) == 0 ? n + 16 : n;
      if (Rand(rng, 0, 1) && c.attrs.contains("units")) c.args.push_back({DType::kF32, {n}});
      return c;
    };
    (*g)["broadcast_to"] = [](std::mt19937& rng) {
      const Shape target = RandShape(rng, 0, 4);
      return Case{{{DType::kF32, BroadcastPartner(rng, target)}},
                  {{"shape", std::vector<int64_t>(target.begin(), target.end())}}};
    };
    (*g)["tile"] = [](std::mt19937& rng) {
      std::vector<int64_t> reps(Rand(rng, 0, 4));
      for (int64_t& r : reps) r = Rand(rng, 0, 3);
      return Case{{{DType::kF32, RandShape(rng, 0, 3)}}, {{"reps", reps}}};
    };
    (*g)["dyn.nn.pad"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      std::vector<double> width;
      for (size_t i = 0; i < 2 * s.size(); ++i) width.push_back(static_cast<double>(Rand(rng, 0, 2)));
      if (!width.empty() && Rand(rng, 0, 9) == 0) width[0] = -1;  // an error both ways
      return Case{{{DType::kF32, s}, {DType::kI64, {static_cast<int64_t>(width.size())}}}, {}, 1, {{1, width}}};
    };
    (*g)["dyn.tile"] = [](std::mt19937& rng) {
      std::vector<double> reps(Rand(rng, 0, 4));
      for (double& r : reps) r = static_cast<double>(Rand(rng, 0, 3));
      if (!reps.empty() && Rand(rng, 0, 9) == 0) reps[0] = -1;  // an error both ways
      return Case{{{DType::kF32, RandShape(rng, 0, 3)}, {DType::kI64, {static_cast<int64_t>(reps.size())}}},
                  {}, 1, {{1, reps}}};
    };
    (*g)["strided_slice"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      std::vector<int64_t> begin, end, strides, axes;
      for (size_t i = 0; i < s.size(); ++i) {
        if (Rand(rng, 0, 2) == 0) continue;
        axes.push_back(i);
        begin.push_back(Rand(rng, -6, 6));
        end.push_back(Rand(rng, -6, 6));
        strides.push_back(Rand(rng, 0, 9) == 0 ? 0 : Rand(rng, 0, 1) ? Rand(rng, 1, 3) : -Rand(rng, 1, 3));
      }
      kernels::Attrs attrs = {{"begin", begin}, {"end", end}, {"strides", strides}, {"axes", axes}};
      if (Rand(rng, 0, 3) == 0) attrs["slice_mode"] = std::string("size");
      return Case{{{DType::kF32, s}}, attrs};
    };
    (*g)["split"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      const int64_t axis = Rand(rng, 0, s.size() - 1);
      Case c{{{DType::kF32, s}}, {{"axis", axis}}};
      if (Rand(rng, 0, 1)) {
        const int64_t sections = Rand(rng, 1, 3);
        c.attrs["indices_or_sections"] = sections;
        c.num_outputs = sections;
      } else {
        std::vector<int64_t> points;
        for (int64_t p = Rand(rng, 0, 2); p <= s[axis] + (Rand(rng, 0, 9) == 0); p += Rand(rng, 0, 3)) {
          points.push_back(p);
          if (points.size() == 3) break;
        }
        c.attrs["indices_or_sections"] = points;
        c.num_outputs = static_cast<int>(points.size()) + 1;
      }
      return c;
    };
    (*g)["nn.pad"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      std::vector<int64_t> pads(2 * s.size() + (Rand(rng, 0, 9) == 0));
      for (int64_t& p : pads) p = Rand(rng, 0, 2);
      return Case{{{DType::kF32, s}}, {{"pad_width", pads}}};
    };
    (*g)["gather"] = [](std::mt19937& rng) {
      const Shape data = RandShape(rng, 1, 3);
      Shape indices = data;
      for (int64_t& d : indices) d = Rand(rng, 0, d);
      if (Rand(rng, 0, 9) == 0) indices.push_back(1);
      return Case{{{DType::kF32, data}, {DType::kI64, indices}},
                  {{"axis", Rand(rng, 0, data.size() - 1)}}};
    };
    (*g)["scatter_elements"] = [](std::mt19937& rng) {
      const Shape data = RandShape(rng, 1, 3);
      Shape indices = data;
      for (int64_t& d : indices) d = Rand(rng, 0, d);
      return Case{{{DType::kF32, data}, {DType::kI64, indices}, {DType::kF32, indices}},
                  {{"axis", Rand(rng, 0, data.size() - 1)}}};
    };
    (*g)["cumsum"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      kernels::Attrs attrs;
      if (Rand(rng, 0, 2) != 0) attrs["axis"] = Rand(rng, -4, 3);
      return Case{{{DType::kF32, s}}, attrs};
    };
    (*g)["dyn.cumsum"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      const double axis = static_cast<double>(Rand(rng, -4, 3));
      return Case{{{DType::kF32, s}, {DType::kI64, {1}}}, {}, 1, {{1, {axis}}}};
    };
    // The axes a second input: distinct in-range ones mostly, now and then out of
    // range or repeated (errors both ways); an empty list reduces all or, with
    // noop_with_empty_axes, none.
    for (const char* op : {"dyn.sum", "dyn.prod", "dyn.max", "dyn.min", "dyn.mean", "dyn.l2_norm"}) {
      (*g)[op] = [](std::mt19937& rng) {
        const Shape s = RandShape(rng, 1, 4);
        const int64_t rank = static_cast<int64_t>(s.size());
        std::vector<double> axes;
        for (int64_t a = 0; a < rank; ++a) {
          if (Rand(rng, 0, 2) == 0) axes.push_back(static_cast<double>(Rand(rng, 0, 1) ? a : a - rank));
        }
        if (Rand(rng, 0, 9) == 0) axes.push_back(static_cast<double>(Rand(rng, 0, 9) == 0 ? rank : 0));
        kernels::Attrs attrs = {{"keepdims", Rand(rng, 0, 1)}, {"noop_with_empty_axes", Rand(rng, 0, 1)}};
        return Case{{{DType::kF32, s}, {DType::kI64, {static_cast<int64_t>(axes.size())}}}, attrs, 1, {{1, axes}}};
      };
    }
    (*g)["argsort"] = [](std::mt19937& rng) {
      return Case{{{DType::kF32, RandShape(rng, 1, 3)}}, {{"axis", Rand(rng, -3, 2)}}};
    };
    (*g)["dyn.topk"] = [](std::mt19937& rng) {
      static const char* const kRet[] = {"both", "values", "indices"};
      const std::string ret = kRet[Rand(rng, 0, 2)];
      return Case{{{DType::kF32, RandShape(rng, 1, 3)}, {DType::kI64, {1}}},
                  {{"axis", Rand(rng, -3, 2)}, {"ret_type", ret}},
                  ret == "both" ? 2 : 1,
                  {{1, {static_cast<double>(Rand(rng, 0, 4))}}}};
    };
    (*g)["topk"] = [](std::mt19937& rng) {
      static const char* const kRet[] = {"both", "values", "indices"};
      const std::string ret = kRet[Rand(rng, 0, 2)];
      return Case{{{DType::kF32, RandShape(rng, 1, 3)}},
                  {{"k", Rand(rng, -1, 4)}, {"axis", Rand(rng, -3, 2)}, {"ret_type", ret}},
                  ret == "both" ? 2 : 1};
    };
    for (const char* op : {"zeros", "ones"}) {
      (*g)[op] = [](std::mt19937& rng) {
        const Shape s = RandShape(rng, 0, 3);
        return Case{{}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}, {"dtype", std::string("int64")}}};
      };
    }
    (*g)["random_uniform_like"] = [](std::mt19937& rng) {
      return Case{{{DType::kF32, RandShape(rng, 0, 3)}},
                  {{"seed", Rand(rng, 0, 100)}, {"dtype", std::string(Rand(rng, 0, 1) == 0 ? "float32" : "float64")}}};
    };
    (*g)["full"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      return Case{{{DType::kF32, {}}}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}}};
    };
    (*g)["one_hot"] = [](std::mt19937& rng) {
      return Case{{{DType::kI64, RandShape(rng, 0, 3)}, {DType::kF32, {}}, {DType::kF32, {}}},
                  {{"depth", Rand(rng, 0, 4)}, {"axis", Rand(rng, -4, 3)}}};
    };
    for (int rank : {1, 2}) {
      (*g)[rank == 1 ? "nn.conv1d" : "nn.conv2d"] = [rank](std::mt19937& rng) {
        const int64_t groups = Rand(rng, 1, 2), cin = groups * Rand(rng, 1, 2), cout = groups * Rand(rng, 1, 3);
        Shape data = {Rand(rng, 0, 2), cin}, weight = {cout, Rand(rng, 0, 9) == 0 ? cin : cin / groups};
        std::vector<int64_t> strides, dilation, padding;
        for (int i = 0; i < rank; ++i) {
          data.push_back(Rand(rng, 0, 7));
          weight.push_back(Rand(rng, 1, 3));
          strides.push_back(Rand(rng, 1, 3));
          dilation.push_back(Rand(rng, 1, 2));
        }
        for (int i = 0; i < 2 * rank; ++i) padding.push_back(Rand(rng, 0, 2));
        Case c{{{DType::kF32, data}, {DType::kF32, weight}},
               {{"strides", strides}, {"dilation", dilation}, {"padding", padding}, {"groups", groups}}};
        if (Rand(rng, 0, 1)) c.args.push_back({DType::kF32, {cout}});
        return c;
      };
    }
    for (const bool max : {true, false}) {
      (*g)[max ? "nn.max_pool2d" : "nn.avg_pool2d"] = [max](std::mt19937& rng) {
        const Shape data = {Rand(rng, 0, 2), Rand(rng, 0, 3), Rand(rng, 0, 7), Rand(rng, 0, 7)};
        Case c{{{max && Rand(rng, 0, 1) ? DType::kU8 : DType::kF32, data}},
               {{"pool_size", std::vector<int64_t>{Rand(rng, 1, 3), Rand(rng, 1, 3)}},
                {"strides", std::vector<int64_t>{Rand(rng, 1, 3), Rand(rng, 1, 3)}},
                {"padding", std::vector<int64_t>{Rand(rng, 0, 1), Rand(rng, 0, 1)}},
                {"ceil_mode", Rand(rng, 0, 1)}}};
        if (max && Rand(rng, 0, 1)) {  // the maxima's indices too
          c.attrs["with_indices"] = int64_t{1};
          c.num_outputs = 2;
        }
        return c;
      };
    }
    (*g)["nn.global_avg_pool2d"] = [](std::mt19937& rng) {
      return Case{{{DType::kF32, RandShape(rng, 3, 5)}}, {}};
    };
    // Both resizes take a roi last now and then (f32 [8], now and then not: an error both
    // ways), which tf_crop_and_resize needs (its N and C ranges [0, 1]).
    const auto with_roi = [](std::mt19937& rng, Case c) {
      if (Rand(rng, 0, 2) != 0) return c;
      c.args.push_back({Rand(rng, 0, 9) == 0 ? DType::kI64 : DType::kF32, {Rand(rng, 0, 9) == 0 ? 4 : 8}});
      c.values[static_cast<int>(c.args.size()) - 1] = {0, 0, 0.1, 0.2, 1, 1, 0.9, 1.3};
      if (Rand(rng, 0, 1)) c.attrs["coordinate_transformation_mode"] = std::string("tf_crop_and_resize");
      return c;
    };
    (*g)["dyn.image.resize2d"] = [with_roi](std::mt19937& rng) {
      const Shape data = {Rand(rng, 1, 2), Rand(rng, 1, 2), Rand(rng, 1, 4), Rand(rng, 1, 4)};
      if (Rand(rng, 0, 1) == 0) {  // sizes, now and then changing C (an error both ways)
        const double c = static_cast<double>(Rand(rng, 0, 9) == 0 ? data[1] + 1 : data[1]);
        return with_roi(rng, Case{{{DType::kF32, data}, {DType::kI64, {4}}}, {}, 1,
                                  {{1, {static_cast<double>(data[0]), c, static_cast<double>(Rand(rng, 0, 5)),
                                        static_cast<double>(Rand(rng, 0, 5))}}}});
      }
      return with_roi(rng, Case{{{DType::kF32, data}, {DType::kF32, {4}}}, {}, 1,
                                {{1, {1.0, 1.0, 0.5 * static_cast<double>(Rand(rng, 1, 5)),
                                      0.5 * static_cast<double>(Rand(rng, 1, 5))}}}});
    };
    (*g)["image.resize2d"] = [with_roi](std::mt19937& rng) {
      const Shape data = {Rand(rng, 0, 2), Rand(rng, 0, 2), Rand(rng, 0, 4), Rand(rng, 0, 4)};
      return with_roi(rng,
                      Case{{{DType::kF32, data}}, {{"size", std::vector<int64_t>{Rand(rng, 0, 5), Rand(rng, 0, 5)}}}});
    };
    // Grids whose N or last extent now and then do not fit (an error both ways).
    (*g)["nn.grid_sample"] = [](std::mt19937& rng) {
      const Shape data = {Rand(rng, 0, 2), Rand(rng, 0, 2), Rand(rng, 0, 4), Rand(rng, 0, 4)};
      const Shape grid = {Rand(rng, 0, 9) == 0 ? data[0] + 1 : data[0], Rand(rng, 0, 3), Rand(rng, 0, 3),
                          Rand(rng, 0, 9) == 0 ? 3 : 2};
      return Case{{{DType::kF32, data}, {DType::kF32, grid}},
                  {{"method", std::string(Rand(rng, 0, 1) ? "bicubic" : "nearest")},
                   {"padding_mode", std::string(Rand(rng, 0, 1) ? "border" : "reflection")},
                   {"align_corners", Rand(rng, 0, 1)}}};
    };
    (*g)["vision.roi_align"] = [](std::mt19937& rng) {
      const Shape data = {Rand(rng, 0, 2), Rand(rng, 0, 2), Rand(rng, 0, 4), Rand(rng, 0, 4)};
      const int64_t rois = Rand(rng, 0, 3);
      return Case{{{DType::kF32, data},
                   {DType::kF32, {rois, Rand(rng, 0, 9) == 0 ? 5 : 4}},
                   {Rand(rng, 0, 1) ? DType::kI64 : DType::kI32, {Rand(rng, 0, 9) == 0 ? rois + 1 : rois}}},
                  {{"pooled_size", std::vector<int64_t>{Rand(rng, 1, 3), Rand(rng, 1, 3)}},
                   {"sample_ratio", Rand(rng, -1, 2)},
                   {"mode", std::string(Rand(rng, 0, 1) ? "avg" : "max")},
                   {"aligned", Rand(rng, 0, 1)}}};
    };
    // Boxes that now and then do not match the scores, scalars of one value, none or (an
    // error both ways) two, with or without a score threshold; the values decide the count.
    (*g)["vision.all_class_non_max_suppression"] = [](std::mt19937& rng) {
      const int64_t n = Rand(rng, 0, 4);
      const Shape boxes = {Rand(rng, 0, 2), Rand(rng, 0, 9) == 0 ? n + 1 : n, Rand(rng, 0, 9) == 0 ? 3 : 4};
      const Shape scores = {boxes[0], Rand(rng, 0, 2), n};
      const auto scalar = [&rng] {
        const int64_t r = Rand(rng, 0, 9);
        return r == 0 ? Shape{2} : r < 3 ? Shape{0} : r < 6 ? Shape{} : Shape{1};
      };
      Case c{{{DType::kF32, boxes}, {DType::kF32, scores}, {DType::kI64, scalar()}, {DType::kF32, scalar()}},
             {{"center_point_box", Rand(rng, 0, 1)}}};
      if (Rand(rng, 0, 1)) c.args.push_back({DType::kF32, scalar()});
      for (size_t i = 0; i < c.args.size(); ++i) {
        int64_t count = 1;
        for (int64_t d : c.args[i].second) count *= d;
        std::vector<double>& v = c.values[static_cast<int>(i)];
        for (int64_t e = 0; e < count; ++e) v.push_back(static_cast<double>(Rand(rng, 0, 3)));
      }
      return c;
    };
    // String tensors hold "" (zeros): the stopword "" drops every element (the length
    // comes from the values), "a" none. [1, C] often, now and then another batch or dtype.
    (*g)["text.string_normalizer"] = [](std::mt19937& rng) {
      Shape s = RandShape(rng, 1, 3);
      if (s.size() == 2 && Rand(rng, 0, 2) != 0) s[0] = 1;
      Case c{{{Rand(rng, 0, 9) == 0 ? DType::kF32 : DType::kString, s}},
             {{"is_case_sensitive", Rand(rng, 0, 1)},
              {"case_change_action", std::string(Rand(rng, 0, 1) ? "UPPER" : "NONE")}}};
      if (const int64_t pick = Rand(rng, 0, 2); pick != 0) {
        c.attrs["stopwords"] = kernels::EncodeStringList({std::string(pick == 1 ? "" : "a")});
      }
      return c;
    };
    // Unigrams and a bigram of integers or strings; X now and then of another dtype.
    (*g)["text.tfidf_vectorizer"] = [](std::mt19937& rng) {
      const bool strings = Rand(rng, 0, 2) == 0;
      DType dtype = strings ? DType::kString : Rand(rng, 0, 1) ? DType::kI32 : DType::kI64;
      if (Rand(rng, 0, 9) == 0) dtype = DType::kF32;
      Case c{{{dtype, RandShape(rng, 0, 3)}},
             {{"mode", std::string(Rand(rng, 0, 1) ? "TF" : "TFIDF")},
              {"min_gram_length", Rand(rng, 1, 2)},
              {"max_gram_length", int64_t{2}},
              {"max_skip_count", Rand(rng, 0, 2)},
              {"ngram_counts", std::vector<int64_t>{0, 2}},
              {"ngram_indexes", std::vector<int64_t>{0, Rand(rng, 1, 4), 2}}}};
      if (strings) {
        c.attrs["pool_strings"] = kernels::EncodeStringList(std::vector<std::string>{"", "a", "", "a"});
      } else {
        c.attrs["pool_int64s"] = std::vector<int64_t>{0, 1, 0, 1};
      }
      return c;
    };
    const auto values_of = [](std::mt19937& rng, const Shape& s, int64_t lo, int64_t hi) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      std::vector<double> v(n);
      for (double& x : v) x = static_cast<double>(Rand(rng, lo, hi));
      return v;
    };
    for (const char* op : {"argwhere", "nonzero"}) {
      (*g)[op] = [values_of](std::mt19937& rng) {
        const Shape s = RandShape(rng, 0, 3);
        return Case{{{DType::kF32, s}}, {}, 1, {{0, values_of(rng, s, 0, 1)}}};
      };
    }
    (*g)["unique"] = [values_of](std::mt19937& rng) {
      if (Rand(rng, 0, 1) == 0) {  // the elements of data of any rank
        const Shape s = RandShape(rng, 0, 3);
        return Case{{{DType::kF32, s}}, {}, 4, {{0, values_of(rng, s, -3, 3)}}};
      }
      const Shape s = RandShape(rng, 1, 3);  // slices along an axis, now and then out of range
      return Case{{{DType::kF32, s}},
                  {{"axis", Rand(rng, -static_cast<int64_t>(s.size()), s.size())}},
                  4,
                  {{0, values_of(rng, s, -1, 1)}}};
    };
    (*g)["dyn.reshape"] = [](std::mt19937& rng) {
      const Shape s = {Rand(rng, 1, 3), Rand(rng, 1, 3), Rand(rng, 1, 3)};
      std::vector<double> target = Rand(rng, 0, 1) ? std::vector<double>{double(s[0] * s[1]), double(s[2])}
                                                   : std::vector<double>{-1, double(s[1] * s[2])};
      if (Rand(rng, 0, 9) == 0) target[1] += 1;
      return Case{{{DType::kF32, s}, {DType::kI64, {static_cast<int64_t>(target.size())}}}, {}, 1, {{1, target}}};
    };
    (*g)["dyn.broadcast_to"] = [](std::mt19937& rng) {
      const Shape target = RandShape(rng, 0, 3);
      return Case{{{DType::kF32, BroadcastPartner(rng, target)}, {DType::kI64, {static_cast<int64_t>(target.size())}}},
                  {}, 1, {{1, std::vector<double>(target.begin(), target.end())}}};
    };
    // ONNX Unsqueeze, Squeeze and Split with run-time axes or sizes (i32 or i64): axes
    // mostly distinct and in range, now and then not; sizes that now and then do not sum
    // to the extent or are negative.
    const auto index_dtype = [](std::mt19937& rng) { return Rand(rng, 0, 1) ? DType::kI64 : DType::kI32; };
    (*g)["dyn.expand_dims"] = [index_dtype](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      const int64_t k = Rand(rng, 0, 3), rank = static_cast<int64_t>(s.size()) + k;
      std::vector<int64_t> order(rank);
      for (int64_t i = 0; i < rank; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<double> axes;
      for (int64_t i = 0; i < k; ++i) axes.push_back(static_cast<double>(Rand(rng, 0, 1) ? order[i] : order[i] - rank));
      if (k > 0 && Rand(rng, 0, 9) == 0) axes[0] = Rand(rng, 0, 1) ? static_cast<double>(rank) : axes.back();
      return Case{{{DType::kF32, s}, {index_dtype(rng), {k}}}, {}, 1, {{1, axes}}};
    };
    (*g)["dyn.squeeze"] = [index_dtype](std::mt19937& rng) {
      Shape s = RandShape(rng, 0, 4);
      for (int64_t& d : s) {
        if (Rand(rng, 0, 2) == 0) d = 1;
      }
      const int64_t rank = static_cast<int64_t>(s.size());
      std::vector<int64_t> ones;
      for (int64_t i = 0; i < rank; ++i) {
        if (s[i] == 1) ones.push_back(i);
      }
      std::shuffle(ones.begin(), ones.end(), rng);
      std::vector<double> axes;
      for (int64_t i = Rand(rng, 0, ones.size()) - 1; i >= 0; --i) {
        axes.push_back(static_cast<double>(Rand(rng, 0, 1) ? ones[i] : ones[i] - rank));
      }
      if (rank > 0 && Rand(rng, 0, 9) == 0) axes.push_back(static_cast<double>(Rand(rng, -rank, rank)));
      return Case{{{DType::kF32, s}, {index_dtype(rng), {static_cast<int64_t>(axes.size())}}}, {}, 1, {{1, axes}}};
    };
    (*g)["dyn.split"] = [index_dtype](std::mt19937& rng) {
      const Shape s = RandShape(rng, 1, 3);
      const int64_t rank = static_cast<int64_t>(s.size()), axis = Rand(rng, -rank, rank - 1);
      const int64_t k = Rand(rng, 1, 4);
      std::vector<double> sizes(k, 0.0);
      for (int64_t e = 0; e < s[axis < 0 ? axis + rank : axis]; ++e) sizes[Rand(rng, 0, k - 1)] += 1;
      if (Rand(rng, 0, 9) == 0) sizes[Rand(rng, 0, k - 1)] += Rand(rng, 0, 1) ? 1 : -7;
      return Case{{{DType::kF32, s}, {index_dtype(rng), {k}}}, {{"axis", axis}}, static_cast<int>(k), {{1, sizes}}};
    };
    for (const char* op : {"dyn.zeros", "dyn.ones"}) {
      (*g)[op] = [](std::mt19937& rng) {
        const Shape target = RandShape(rng, 0, 3);
        return Case{{{DType::kI64, {static_cast<int64_t>(target.size())}}}, {}, 1,
                    {{0, std::vector<double>(target.begin(), target.end())}}};
      };
    }
    (*g)["dyn.full"] = [](std::mt19937& rng) {
      const Shape target = RandShape(rng, 0, 3);
      return Case{{{DType::kF32, {}}, {DType::kI64, {static_cast<int64_t>(target.size())}}}, {}, 1,
                  {{1, std::vector<double>(target.begin(), target.end())}}};
    };
    (*g)["shape_of"] = [](std::mt19937& rng) {
      static constexpr DType kDTypes[] = {DType::kF32, DType::kI64, DType::kBool, DType::kF16};
      Case c{{{kDTypes[Rand(rng, 0, 3)], RandShape(rng, 0, 4)}}, {}};
      if (Rand(rng, 0, 1)) c.attrs["dtype"] = std::string(Rand(rng, 0, 1) ? "int32" : "int64");
      if (Rand(rng, 0, 2) == 0) c.attrs["start"] = Rand(rng, -6, 6);
      if (Rand(rng, 0, 2) == 0) c.attrs["end"] = Rand(rng, -6, 6);
      return c;
    };
    // ONNX Slice: 3 to 5 index inputs of one length, now and then too long, of different
    // lengths, of a float dtype, with a repeated or out-of-range axis or a step of 0.
    (*g)["dyn.strided_slice"] = [](std::mt19937& rng) {
      const Shape s = RandShape(rng, 0, 3);
      const int64_t rank = static_cast<int64_t>(s.size());
      const int64_t n = Rand(rng, 0, rank) + (Rand(rng, 0, 19) == 0);
      const auto bound = [&rng]() -> double {
        const int64_t pick = Rand(rng, 0, 5);
        if (pick == 0) return std::numeric_limits<int32_t>::max();  // "to the end"
        if (pick == 1) return std::numeric_limits<int32_t>::min();
        return static_cast<double>(Rand(rng, -6, 6));
      };
      std::vector<int64_t> order;
      for (int64_t a = 0; a < rank; ++a) order.push_back(a);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<double> starts, ends, axes, steps;
      for (int64_t i = 0; i < n; ++i) {
        starts.push_back(bound());
        ends.push_back(bound());
        const int64_t axis = i < rank ? order[i] : 0;
        axes.push_back(static_cast<double>(Rand(rng, 0, 1) ? axis : axis - rank));
        steps.push_back(Rand(rng, 0, 19) == 0 ? 0.0 : static_cast<double>(Rand(rng, 0, 1) ? Rand(rng, 1, 3) : -Rand(rng, 1, 3)));
      }
      if (n > 0 && Rand(rng, 0, 19) == 0) axes[0] = static_cast<double>(rank);
      if (Rand(rng, 0, 19) == 0) ends.push_back(1);
      const DType index = Rand(rng, 0, 9) == 0 ? DType::kF32 : Rand(rng, 0, 1) ? DType::kI64 : DType::kI32;
      const auto length = [](const std::vector<double>& v) { return Shape{static_cast<int64_t>(v.size())}; };
      Case c{{{DType::kF32, s}, {index, length(starts)}, {index, length(ends)}}, {}, 1, {{1, starts}, {2, ends}}};
      const int64_t inputs = Rand(rng, 3, 5);
      if (inputs >= 4) {
        c.args.push_back({index, length(axes)});
        c.values[3] = axes;
      }
      if (inputs == 5) {
        c.args.push_back({index, length(steps)});
        c.values[4] = steps;
      }
      return c;
    };
    (*g)["arange"] = [](std::mt19937& rng) {
      return Case{{{DType::kF32, {}}, {DType::kF32, {}}, {DType::kF32, Rand(rng, 0, 9) == 0 ? Shape{1} : Shape{}}},
                  {}, 1,
                  {{0, {double(Rand(rng, -3, 3))}}, {1, {double(Rand(rng, -3, 9))}}, {2, {double(Rand(rng, 1, 3))}}}};
    };
    (*g)["nn.attention"] = [](std::mt19937& rng) {
      const int64_t b = Rand(rng, 0, 2), h = Rand(rng, 0, 2), sq = Rand(rng, 0, 4), sk = Rand(rng, 0, 4),
                    d = Rand(rng, 0, 4), dv = Rand(rng, 0, 4);
      Case c{{{DType::kF32, {b, h, sq, d}}, {DType::kF32, {b, h, sk, Rand(rng, 0, 9) == 0 ? d + 1 : d}},
              {DType::kF32, {b, h, sk, dv}}}, {}};
      // Layout BSHD: q, k and v with sequence and heads swapped, the mask as it was;
      // now and then a layout that does not exist.
      const int64_t layout = Rand(rng, 0, 9);
      if (layout < 5) {
        for (auto& [dtype, shape] : c.args) std::swap(shape[1], shape[2]);
        c.attrs["layout"] = std::string("BSHD");
      } else if (layout == 5) {
        c.attrs["layout"] = std::string("SBHD");
      }
      if (Rand(rng, 0, 1)) c.args.push_back({DType::kF32, BroadcastPartner(rng, {b, h, sq, sk})});
      return c;
    };
    (*g)["nn.varlen_attention"] = [](std::mt19937& rng) {
      const int64_t t = Rand(rng, 0, 5), h = Rand(rng, 0, 2), d = Rand(rng, 0, 4), dv = Rand(rng, 0, 4);
      const DType index = Rand(rng, 0, 9) == 0 ? DType::kF32 : Rand(rng, 0, 1) ? DType::kI32 : DType::kI64;
      // Offsets rising from 0 to t: 0, t (one sequence) or 0, t / 2, t; now and then a
      // k of another shape.
      std::vector<double> offsets = {0, double(t)};
      if (Rand(rng, 0, 1)) offsets.insert(offsets.begin() + 1, double(t / 2));
      return Case{{{DType::kF32, {t, h, d}}, {DType::kF32, {t, h, Rand(rng, 0, 9) == 0 ? d + 1 : d}},
                   {DType::kF32, {t, h, dv}}, {index, {static_cast<int64_t>(offsets.size())}}},
                  {}, 1, {{3, offsets}}};
    };
    (*g)["sequence_positions"] = [](std::mt19937& rng) {
      const int64_t t = Rand(rng, 0, 5);
      const DType index = Rand(rng, 0, 9) == 0 ? DType::kF32 : Rand(rng, 0, 1) ? DType::kI32 : DType::kI64;
      std::vector<double> offsets = {0, double(t)};
      if (Rand(rng, 0, 1)) offsets.insert(offsets.begin() + 1, double(t / 2));
      return Case{{{index, {static_cast<int64_t>(offsets.size())}}, {DType::kF32, RandShape(rng, 1, 3)}},
                  {}, 1, {{0, offsets}}};
    };
    (*g)["sequence_rows"] = [](std::mt19937& rng) {
      const DType index = Rand(rng, 0, 9) == 0 ? DType::kF32 : Rand(rng, 0, 1) ? DType::kI32 : DType::kI64;
      const int64_t n = Rand(rng, 1, 4);
      std::vector<double> offsets;
      for (int64_t i = 0; i < n; ++i) offsets.push_back(double(2 * i));
      return Case{{{index, {n}}}, {}, 1, {{0, offsets}}};
    };
    for (int gates : {3, 4}) {
      (*g)[gates == 4 ? "nn.lstm_cell" : "nn.gru_cell"] = [gates](std::mt19937& rng) {
        const int64_t b = Rand(rng, 0, 3), in = Rand(rng, 0, 4), hid = Rand(rng, 1, 4);
        Case c{{{DType::kF32, {b, in}}, {DType::kF32, {b, hid}}}, {}, gates == 4 ? 2 : 1};
        if (gates == 4) c.args.push_back({DType::kF32, {b, hid}});
        c.args.push_back({DType::kF32, {gates * hid, Rand(rng, 0, 9) == 0 ? in + 1 : in}});
        c.args.push_back({DType::kF32, {gates * hid, hid}});
        if (Rand(rng, 0, 1)) {
          c.args.push_back({DType::kF32, {gates * hid}});
          c.args.push_back({DType::kF32, {gates * hid}});
        }
        return c;
      };
    }
    // The layers (nn.rnn: one gate): x [seq, b, in] and the attribute reverse, now and
    // then not 0 or 1; the LSTM's peepholes p [3 hid] after the biases (now and then of
    // 4 hid, or without the biases), the GRU's linear_before_reset (now and then 2, or
    // given to the others); then seq_lens [b], int32 or int64 (now and then float32 or of
    // b + 1, or without all the inputs before it); now and then an activation (or an
    // unknown one), alpha values (or too many) and a clip (or a negative one).
    for (int gates : {1, 3, 4}) {
      (*g)[gates == 4 ? "nn.lstm" : gates == 3 ? "nn.gru" : "nn.rnn"] = [gates](std::mt19937& rng) {
        const int64_t seq = Rand(rng, 0, 3), b = Rand(rng, 0, 3), in = Rand(rng, 0, 4), hid = Rand(rng, 1, 4);
        Case c{{{DType::kF32, {seq, b, in}}, {DType::kF32, {Rand(rng, 0, 9) == 0 ? b + 1 : b, hid}}}, {}, gates == 4 ? 3 : 2};
        if (gates == 4) c.args.push_back({DType::kF32, {b, Rand(rng, 0, 9) == 0 ? hid + 1 : hid}});
        c.args.push_back({DType::kF32, {gates * hid, Rand(rng, 0, 9) == 0 ? in + 1 : in}});
        c.args.push_back({DType::kF32, {gates * hid, hid}});
        const bool bias = Rand(rng, 0, 1);
        if (bias) {
          c.args.push_back({DType::kF32, {gates * hid}});
          c.args.push_back({DType::kF32, {Rand(rng, 0, 9) == 0 ? gates * hid + 1 : gates * hid}});
        }
        if (gates == 4 && (bias ? Rand(rng, 0, 1) : Rand(rng, 0, 19) == 0)) {
          c.args.push_back({DType::kF32, {Rand(rng, 0, 9) == 0 ? 4 * hid : 3 * hid}});
        }
        const bool before = bias && (gates != 4 || c.args.size() == 8);
        if (before ? Rand(rng, 0, 1) != 0 : Rand(rng, 0, 19) == 0) {
          const int64_t pick = Rand(rng, 0, 19);
          const DType dtype = pick == 0 ? DType::kF32 : Rand(rng, 0, 1) ? DType::kI32 : DType::kI64;
          c.args.push_back({dtype, {pick == 1 ? b + 1 : b}});
        }
        if (Rand(rng, 0, 2) != 0) c.attrs["reverse"] = Rand(rng, 0, 19) == 0 ? int64_t{2} : Rand(rng, 0, 1);
        if (gates == 3 ? Rand(rng, 0, 1) != 0 : Rand(rng, 0, 19) == 0) {
          c.attrs["linear_before_reset"] = Rand(rng, 0, 19) == 0 ? int64_t{2} : Rand(rng, 0, 1);
        }
        if (Rand(rng, 0, 3) == 0) {
          c.attrs[Rand(rng, 0, 9) == 0 ? "activation_h" : "activation_f"] =
              std::string(Rand(rng, 0, 9) == 0 ? "Swish" : "LeakyRelu");
        }
        if (Rand(rng, 0, 3) == 0) c.attrs["activation_alpha"] = std::vector<double>(Rand(rng, 1, 2), 0.5);
        if (Rand(rng, 0, 3) == 0) c.attrs["clip"] = Rand(rng, 0, 9) == 0 ? -1.0 : 2.5;
        return c;
      };
    }
    return g;
  }();
  return *gens;
}

std::vector<Type> Types(const Case& c, const std::vector<Dim>& replace_from = {}, const Dim& symbol = Dim()) {
  std::vector<Type> types;
  for (const auto& [dtype, shape] : c.args) {
    std::vector<Dim> dims;
    for (int64_t d : shape) {
      const bool replace = !replace_from.empty() && Dim(d) == replace_from[0];
      dims.push_back(replace ? symbol : Dim(d));
    }
    types.push_back(Type::Tensor(dtype, std::move(dims)));
  }
  return types;
}

std::string Describe(const std::string& op, const Case& c) {
  std::string out = op + "(";
  for (const auto& [dtype, shape] : c.args) {
    absl::StrAppend(&out, std::string(RelayDTypeName(dtype)), "[", absl::StrJoin(shape, ","), "] ");
  }
  return out + ")";
}

TEST(RelationsTest, EveryKernelHasARelation) {
  for (const std::string& name : kernels::DefaultRegistry().Names()) {
    // Not an operator of the IR: native code generation renames fused_elementwise
    // entries of the kernel table to it, after type inference.
    if (name == kernels::kNativeElementwiseKernel) continue;
    EXPECT_NE(FindOp(name), nullptr) << name << " has no type relation";
  }
}

TEST(RelationsTest, EveryOperatorHasAKernelAndATestGenerator) {
  for (const OpDef& def : AllOps()) {
    if (def.bytecode) continue;  // no kernel: code generation emits bytecode (codegen tests)
    EXPECT_NE(kernels::DefaultRegistry().Find(def.name), nullptr) << def.name;
    EXPECT_TRUE(Generators().contains(std::string(def.name))) << def.name << " has no generator";
  }
  EXPECT_EQ(FindOp("nn.dense")->name, "nn.dense");
  EXPECT_EQ(FindOp("nn.dense2"), nullptr);
}

TEST(RelationsTest, AgreeWithKernelShapeFunctions) {
  std::mt19937 rng(1);
  const auto allocator = MakeNaiveAllocator();
  for (const OpDef& def : AllOps()) {
    if (def.bytecode) continue;
    const std::string op(def.name);
    int accepted = 0;
    for (int iter = 0; iter < 150; ++iter) {
      const Case c = Generators().at(op)(rng);
      SCOPED_TRACE(Describe(op, c));
      const std::vector<Type> types = Types(c);
      const absl::StatusOr<Type> relation = InferCallType(def, types, c.attrs);

      std::vector<NDArray> inputs;
      std::vector<NDArrayObj*> raw;
      for (size_t i = 0; i < c.args.size(); ++i) {
        const auto& [dtype, shape] = c.args[i];
        inputs.push_back(*NDArrayObj::Empty(shape, dtype, allocator));
        NDArrayObj& t = *inputs.back();
        std::memset(t.data(), 0, t.nbytes());
        const auto it = c.values.find(static_cast<int>(i));
        for (int64_t e = 0; it != c.values.end() && e < t.num_elements(); ++e) {
          const double v = it->second[e];
          switch (dtype) {
            case DType::kF32: t.data_as<float>()[e] = static_cast<float>(v); break;
            case DType::kI64: t.data_as<int64_t>()[e] = static_cast<int64_t>(v); break;
            case DType::kI32: t.data_as<int32_t>()[e] = static_cast<int32_t>(v); break;
            default: t.data_as<uint8_t>()[e] = v != 0; break;
          }
        }
        raw.push_back(inputs.back().get());
      }
      absl::StatusOr<kernels::BoundKernel> kernel =
          kernels::DefaultRegistry().Bind(op, c.attrs, static_cast<int>(raw.size()), c.num_outputs);
      std::vector<dynvm::Shape> kernel_shapes(c.num_outputs);
      absl::Status kernel_status = kernel.ok() ? kernel->InferShapes(raw.data(), kernel_shapes.data())
                                               : kernel.status();
      // Where the shape depends on values, only the kernel sees them: a call the types
      // allow may still fail then. The converse must hold.
      if (!c.values.empty() && relation.ok() && !kernel_status.ok()) continue;
      ASSERT_EQ(relation.ok(), kernel_status.ok())
          << "relation: " << (relation.ok() ? relation->ToString() : relation.status().ToString())
          << "\nkernel: " << kernel_status;
      if (!relation.ok()) continue;
      ++accepted;
      const std::vector<Type> outputs =
          relation->kind() == TypeKind::kTuple ? relation->fields() : std::vector<Type>{*relation};
      ASSERT_EQ(static_cast<int>(outputs.size()), c.num_outputs) << relation->ToString();
      for (int o = 0; o < c.num_outputs; ++o) {
        // `?`: the extent the relation cannot know, which the kernel finds from values.
        ASSERT_EQ(outputs[o].rank(), static_cast<int>(kernel_shapes[o].size())) << relation->ToString();
        for (int d = 0; d < outputs[o].rank(); ++d) {
          if (outputs[o].shape()[d].is_any()) continue;
          ASSERT_EQ(outputs[o].shape()[d], Dim(kernel_shapes[o][d])) << relation->ToString();
        }
      }

      // The same call with one extent symbolic.
      if (types.empty() || types[0].rank() == 0 || relation->kind() == TypeKind::kTuple) continue;
      const Dim picked = types[0].shape()[Rand(rng, 0, types[0].rank() - 1)];
      const Dim n = Dim::Symbol("n");
      const absl::StatusOr<Type> symbolic = InferCallType(def, Types(c, {picked}, n), c.attrs);
      // Some extents must be static (squeeze without axis, the length of a shape tensor).
      if (!symbolic.ok() && absl::StrContains(symbolic.status().message(), "static")) continue;
      ASSERT_TRUE(symbolic.ok()) << "symbolic n = " << picked.ToString() << ": " << symbolic.status();
      const Type bound = symbolic->SubstituteDims({{"n", picked}});
      ASSERT_EQ(bound.rank(), relation->rank()) << symbolic->ToString();
      for (int i = 0; i < bound.rank(); ++i) {
        if (symbolic->shape()[i].ToString().find('?') != std::string::npos) continue;
        EXPECT_EQ(bound.shape()[i], relation->shape()[i])
            << "symbolic " << symbolic->ToString() << " with n = " << picked.ToString();
      }
    }
    EXPECT_GT(accepted, 10) << op << ": too few valid cases to mean anything";
  }
}

TEST(RelationsTest, SymbolicExamples) {
  const Dim n = Dim::Symbol("n"), b = Dim::Symbol("b");
  const auto call = [](std::string_view op, std::vector<Type> args, kernels::Attrs attrs = {}) {
    return InferCallType(*FindOp(op), args, attrs);
  };
  const Type x = Type::Tensor(DType::kF32, {b, n, 768});
  EXPECT_EQ(call("nn.dense", {x, Type::Tensor(DType::kF32, {3072, 768})})->ToString(),
            "Tensor[(b, n, 3072), float32]");
  EXPECT_EQ(call("reshape", {x}, {{"newshape", std::vector<int64_t>{0, 0, 12, 64}}})->ToString(),
            "Tensor[(b, n, 12, 64), float32]");
  EXPECT_EQ(call("reshape", {x}, {{"newshape", std::vector<int64_t>{-1, 768}}})->ToString(),
            "Tensor[(b*n, 768), float32]");
  EXPECT_EQ(call("add", {x, Type::Tensor(DType::kF32, {768})})->ToString(),
            "Tensor[(b, n, 768), float32]");
  EXPECT_EQ(call("add", {Type::Tensor(DType::kF32, {n}), Type::Tensor(DType::kF32, {b})})->ToString(),
            "Tensor[(?), float32]");
  // An extent clamped to a constant >= 1 (a position table sliced by the length)
  // broadcast with the extent is the extent; clamped to 0 it is not.
  EXPECT_EQ(call("add", {x, Type::Tensor(DType::kF32, {1, Min(n, 512), 768})})->ToString(),
            "Tensor[(b, n, 768), float32]");
  EXPECT_EQ(call("add", {Type::Tensor(DType::kF32, {Min(512, n)}), Type::Tensor(DType::kF32, {n})})
                ->ToString(),
            "Tensor[(n), float32]");
  EXPECT_EQ(call("add", {Type::Tensor(DType::kF32, {n}), Type::Tensor(DType::kF32, {Min(n, 0)})})
                ->ToString(),
            "Tensor[(?), float32]");
  // The kernels' dtypes: arithmetic on u8, i8, i16, i32, i64 and floats, power on i32, i64
  // and floats.
  EXPECT_EQ(call("add", {Type::Tensor(DType::kU8, {n}), Type::Tensor(DType::kU8, {n})})->ToString(),
            "Tensor[(n), uint8]");
  EXPECT_EQ(call("floor_mod", {Type::Tensor(DType::kI8, {n}), Type::Tensor(DType::kI8, {1})})->ToString(),
            "Tensor[(n), int8]");
  EXPECT_EQ(call("divide", {Type::Tensor(DType::kI16, {}), Type::Tensor(DType::kI16, {n})})->ToString(),
            "Tensor[(n), int16]");
  EXPECT_FALSE(call("add", {Type::Tensor(DType::kBool, {n}), Type::Tensor(DType::kBool, {n})}).ok());
  EXPECT_EQ(call("power", {Type::Tensor(DType::kI32, {n}), Type::Tensor(DType::kI32, {n})})->ToString(),
            "Tensor[(n), int32]");
  EXPECT_EQ(call("power", {Type::Tensor(DType::kI64, {n}), Type::Tensor(DType::kI64, {n})})->ToString(),
            "Tensor[(n), int64]");
  EXPECT_EQ(call("power", {Type::Tensor(DType::kI16, {n}), Type::Tensor(DType::kI16, {n})}).status().message(),
            "power: unsupported dtype int16 for lhs: expected float32 or float64 or int32 or int64");
  EXPECT_EQ(call("concatenate", {Type::Tuple({x, x})}, {{"axis", int64_t{1}}})->ToString(),
            "Tensor[(b, n*2, 768), float32]");
  EXPECT_EQ(call("nn.batch_matmul", {Type::Tensor(DType::kF32, {b, 12, n, 64}),
                                     Type::Tensor(DType::kF32, {b, 12, n, 64})})->ToString(),
            "Tensor[(b, 12, n, n), float32]");
  EXPECT_EQ(call("take", {Type::Tensor(DType::kF32, {30522, 768}), Type::Tensor(DType::kI64, {b, n})},
                 {{"axis", int64_t{0}}})->ToString(),
            "Tensor[(b, n, 768), float32]");
  // The layers' outputs: y [seq, batch, hid] then the states [batch, hid], hid from h0 and
  // w_hh (the most informative).
  const Dim s = Dim::Symbol("s");
  const Type w_ih = Type::Tensor(DType::kF32, {128, 16}), w_hh = Type::Tensor(DType::kF32, {128, 32});
  const Type h0 = Type::Tensor(DType::kF32, {b, Dim::Any()});
  EXPECT_EQ(call("nn.lstm", {Type::Tensor(DType::kF32, {s, b, 16}), h0, h0, w_ih, w_hh}, {{"reverse", int64_t{1}}})
                ->ToString(),
            "(Tensor[(s, b, 32), float32], Tensor[(b, 32), float32], Tensor[(b, 32), float32])");
  EXPECT_EQ(call("nn.gru", {Type::Tensor(DType::kF32, {s, b, 16}), Type::Tensor(DType::kF32, {b, 32}),
                            Type::Tensor(DType::kF32, {96, 16}), Type::Tensor(DType::kF32, {96, 32})})
                ->ToString(),
            "(Tensor[(s, b, 32), float32], Tensor[(b, 32), float32])");
  EXPECT_EQ(call("nn.gru", {Type::Tensor(DType::kF32, {s, b, 16}), Type::Tensor(DType::kF32, {b, 32}),
                            Type::Tensor(DType::kF32, {96, 16}), Type::Tensor(DType::kF32, {96, 32})},
                 {{"reverse", int64_t{2}}}).status().message(),
            "nn.gru: attribute 'reverse' must be 0 or 1, got 2");
  // ONNX's variants: the LSTM's peepholes p [3 hid] after both biases, the GRU's
  // linear_before_reset.
  const Type x_seq = Type::Tensor(DType::kF32, {s, b, 16}), bias = Type::Tensor(DType::kF32, {128});
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh, bias, bias, Type::Tensor(DType::kF32, {96})})->ToString(),
            "(Tensor[(s, b, 32), float32], Tensor[(b, 32), float32], Tensor[(b, 32), float32])");
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh, bias, bias, Type::Tensor(DType::kF32, {128})})
                .status().message(),
            "nn.lstm: input 7 has shape [128], expected [96]");
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh, Type::Tensor(DType::kF32, {96})}).status().message(),
            "nn.lstm: takes 5, 7, 8 or 9 inputs, got 6");
  // ONNX's sequence_lens: seq_lens [b], int32 or int64, after all the others.
  const Type p = Type::Tensor(DType::kF32, {96});
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh, bias, bias, p, Type::Tensor(DType::kI32, {b})})->ToString(),
            "(Tensor[(s, b, 32), float32], Tensor[(b, 32), float32], Tensor[(b, 32), float32])");
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh, bias, bias, p, Type::Tensor(DType::kF32, {b})})
                .status().message(),
            "nn.lstm: unsupported dtype float32 for seq_lens: expected int32 or int64");
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh, bias, bias, Type::Tensor(DType::kI64, {b})})
                .status().message(),
            "nn.lstm: unsupported dtype int64 for input 7: expected float32");
  const Type gru_w_ih = Type::Tensor(DType::kF32, {96, 16}), gru_w_hh = Type::Tensor(DType::kF32, {96, 32}),
             gru_bias = Type::Tensor(DType::kF32, {96}), gru_h0 = Type::Tensor(DType::kF32, {Dim::Any(), 32});
  EXPECT_EQ(call("nn.gru", {x_seq, gru_h0, gru_w_ih, gru_w_hh, gru_bias, gru_bias, Type::Tensor(DType::kI64, {b})})
                ->ToString(),
            "(Tensor[(s, b, 32), float32], Tensor[(b, 32), float32])");
  // seq_lens's extent is the batch's too.
  EXPECT_EQ(call("nn.gru", {x_seq, gru_h0, gru_w_ih, gru_w_hh, gru_bias, gru_bias, Type::Tensor(DType::kI64, {3})})
                ->ToString(),
            "(Tensor[(s, 3, 32), float32], Tensor[(3, 32), float32])");
  EXPECT_EQ(call("nn.gru", {x_seq, gru_h0, gru_w_ih, gru_w_hh, Type::Tensor(DType::kI64, {b})}).status().message(),
            "nn.gru: takes 4, 6 or 7 inputs, got 5");
  EXPECT_EQ(call("nn.lstm_cell", {Type::Tensor(DType::kF32, {b, 16}), h0, h0, w_ih, w_hh, bias, bias,
                                  Type::Tensor(DType::kF32, {96})}).status().message(),
            "nn.lstm_cell takes 5 to 7 arguments, got 8");
  EXPECT_EQ(call("nn.lstm", {x_seq, h0, h0, w_ih, w_hh}, {{"linear_before_reset", int64_t{0}}}).status().message(),
            "nn.lstm: unknown attribute 'linear_before_reset'");
  EXPECT_EQ(call("nn.gru", {x_seq, Type::Tensor(DType::kF32, {b, 32}), Type::Tensor(DType::kF32, {96, 16}),
                            Type::Tensor(DType::kF32, {96, 32})},
                 {{"linear_before_reset", int64_t{0}}})->ToString(),
            "(Tensor[(s, b, 32), float32], Tensor[(b, 32), float32])");
  EXPECT_EQ(call("shape_of", {x})->ToString(), "Tensor[(3), int64]");
  EXPECT_EQ(call("shape_of", {x}, {{"dtype", std::string("int32")}, {"start", int64_t{-2}}})->ToString(),
            "Tensor[(2), int32]");
  const Type two = Type::Tensor(DType::kI64, {2});
  EXPECT_EQ(call("dyn.strided_slice", {x, two, two})->ToString(), "Tensor[(?, ?, 768), float32]");
  EXPECT_EQ(call("dyn.strided_slice", {x, two, two, two})->ToString(), "Tensor[(?, ?, ?), float32]");
  const Type none = Type::Tensor(DType::kI32, {0});
  EXPECT_EQ(call("dyn.strided_slice", {x, none, none, none, none})->ToString(), "Tensor[(b, n, 768), float32]");
  EXPECT_EQ(call("dyn.strided_slice", {x, Type::Tensor(DType::kI64, {n}), two})->ToString(),
            "Tensor[(?, ?, 768), float32]");
  EXPECT_EQ(call("dyn.strided_slice", {x, Type::Tensor(DType::kI64, {n}), Type::Tensor(DType::kI64, {b})})->ToString(),
            "Tensor[(?, ?, ?), float32]");
  EXPECT_EQ(call("dyn.strided_slice", {x, two, Type::Tensor(DType::kI64, {3})}).status().message(),
            "dyn.strided_slice: index inputs of different lengths: ends has 3 values, expected 2");
  EXPECT_EQ(call("dyn.strided_slice", {x, two, Type::Tensor(DType::kF32, {2})}).status().message(),
            "dyn.strided_slice: unsupported dtype float32 for ends: expected int32 or int64");
  // Run-time axes and sizes: the rank or arity from their static length; the dims that
  // every placement of the axes agrees on, `?` elsewhere.
  EXPECT_EQ(call("dyn.expand_dims", {x, two})->ToString(), "Tensor[(?, ?, ?, ?, ?), float32]");
  EXPECT_EQ(call("dyn.expand_dims", {Type::Tensor(DType::kF32, {1, 1}), Type::Tensor(DType::kI32, {1})})->ToString(),
            "Tensor[(1, 1, 1), float32]");
  EXPECT_EQ(call("dyn.expand_dims", {x, none})->ToString(), "Tensor[(b, n, 768), float32]");
  EXPECT_EQ(call("dyn.expand_dims", {x, Type::Tensor(DType::kI64, {n})}).status().message(),
            "dyn.expand_dims: axes [n] must be a 1-D tensor of static length");
  EXPECT_EQ(call("dyn.expand_dims", {x, Type::Tensor(DType::kI64, {1, 2})}).status().message(),
            "dyn.expand_dims: axes [1, 2] must be a 1-D tensor of static length");
  EXPECT_EQ(call("dyn.expand_dims", {x, Type::Tensor(DType::kF32, {2})}).status().message(),
            "dyn.expand_dims: unsupported dtype float32 for axes: expected int32 or int64");
  const Type one = Type::Tensor(DType::kI64, {1});
  EXPECT_EQ(call("dyn.squeeze", {Type::Tensor(DType::kF32, {b, 1, 768}), one})->ToString(),
            "Tensor[(?, 768), float32]");
  EXPECT_EQ(call("dyn.squeeze", {Type::Tensor(DType::kF32, {4, 1, 768}), one})->ToString(),
            "Tensor[(4, 768), float32]");
  EXPECT_EQ(call("dyn.squeeze", {Type::Tensor(DType::kF32, {1, b, 1}), two})->ToString(),
            "Tensor[(?), float32]");
  EXPECT_EQ(call("dyn.squeeze", {Type::Tensor(DType::kF32, {1, 1}), two})->ToString(), "float32");
  EXPECT_EQ(call("dyn.squeeze", {Type::Tensor(DType::kF32, {3, 4}), one}).status().message(),
            "dyn.squeeze: 1 axes to squeeze from [3, 4], where at most 0 may have extent 1");
  EXPECT_EQ(call("dyn.squeeze", {Type::Tensor(DType::kF32, {1}), two}).status().message(),
            "dyn.squeeze: 2 axes to squeeze from [1], where at most 1 may have extent 1");
  EXPECT_EQ(call("dyn.squeeze", {x, Type::Tensor(DType::kI32, {b})}).status().message(),
            "dyn.squeeze: axes [b] must be a 1-D tensor of static length");
  const Type three = Type::Tensor(DType::kI64, {3});
  EXPECT_EQ(call("dyn.split", {x, three}, {{"axis", int64_t{-1}}})->ToString(),
            "(Tensor[(b, n, ?), float32], Tensor[(b, n, ?), float32], Tensor[(b, n, ?), float32])");
  EXPECT_EQ(call("dyn.split", {x, one})->ToString(), "(Tensor[(b, n, 768), float32],)");
  EXPECT_EQ(call("dyn.split", {Type::Tensor(DType::kF32, {0, 2}), two})->ToString(),
            "(Tensor[(0, 2), float32], Tensor[(0, 2), float32])");
  EXPECT_EQ(call("dyn.split", {x, Type::Tensor(DType::kI64, {n})}).status().message(),
            "dyn.split: sizes [n] must be a 1-D tensor of static length");
  EXPECT_EQ(call("dyn.split", {x, Type::Tensor(DType::kI64, {0})}).status().message(),
            "dyn.split: sizes must have at least one value, one per output");
  EXPECT_EQ(call("dyn.split", {x, three}, {{"axis", int64_t{3}}}).status().message(),
            "dyn.split: axis 3 out of range for rank 3");
  EXPECT_EQ(call("add", {Type::Tensor(DType::kF32, {3, 4}), Type::Tensor(DType::kF32, {5})}).status().message(),
            "add: cannot broadcast [3, 4] and [5]: dims 4 and 5 differ");
  EXPECT_EQ(call("add", {Type::Tensor(DType::kF32, {3}), Type::Tensor(DType::kI32, {3})}).status().message(),
            "add: operands have dtypes float32 and int32, expected one dtype");
  EXPECT_EQ(InferCallType(*FindOp("nn.dense"), {x}, {}).status().message(),
            "nn.dense takes 2 to 3 arguments, got 1");
  EXPECT_EQ(call("exp", {Type::Tuple({x})}).status().message(),
            "exp: x must be a tensor, got (Tensor[(b, n, 768), float32],)");
}

}  // namespace
}  // namespace dynvm::compiler
