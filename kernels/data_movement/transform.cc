// Layout transforms: reshape, dyn.reshape, squeeze, dyn.squeeze, expand_dims,
// dyn.expand_dims, transpose, broadcast_to, dyn.broadcast_to, tile and dyn.tile. They work for
// every dtype (they move elements by size) and write an output of the input's dtype.
// The dyn.* forms read what the plain ones take as attributes (a shape, axes) from an
// input tensor, for ONNX graphs that compute it at run time.
//
// Each reduces to one strided copy (internal/data_movement.h): reshape, squeeze and
// expand_dims to a memcpy; transpose to the source strides permuted; broadcast_to to 0
// strides on broadcast axes; tile to a copy over a view of rank 2n whose axes are
// (repetition, extent) pairs with the repetition axes at stride 0 in the source.
#include "kernels/data_movement/transform.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"
#include "kernels/elementwise/broadcast.h"

namespace dynvm::kernels {
namespace {

using internal::CheckOutput;
using internal::Dims;
using internal::InferShapeFn;
using internal::SingleShapeFn;

// ---------------------------------------------------------------------------------------
// reshape, dyn.reshape

// Relay's special values in a new shape.
constexpr int64_t kCopyDim = 0;     // the input's extent at this position
constexpr int64_t kInferDim = -1;   // whatever makes the element counts match (once)
constexpr int64_t kCopyRest = -2;   // all remaining input extents
constexpr int64_t kMergeDims = -3;  // the product of the next two input extents
constexpr int64_t kSplitDim = -4;   // the next input extent split into the next two values

struct ReshapeState {
  std::vector<int64_t> newshape;  // reshape only
  bool allowzero = false;         // ONNX's: 0 is a literal extent, not kCopyDim
};

// A new shape with Relay's special values expanded, -1 still to be inferred.
struct ExpandedShape {
  Shape dims;
  absl::InlinedVector<bool, kMaxRank> derived;  // dims taken from input extents
  absl::InlinedVector<bool, kMaxRank> used_in;  // input extents consumed by 0/-2/-3/-4
  int infer = -1;                               // the position of -1, if any
};

// Expands 0, -2, -3 and -4 against the input extents `in`; errors say only why.
absl::StatusOr<ExpandedShape> ExpandSpecialValues(absl::Span<const int64_t> in,
                                                  absl::Span<const int64_t> newshape,
                                                  bool allowzero) {
  ExpandedShape e;
  e.used_in.assign(in.size(), false);
  size_t src = 0;
  auto push = [&](int64_t dim, bool derived) {
    e.dims.push_back(dim);
    e.derived.push_back(derived);
  };
  auto take_input = [&]() -> std::optional<int64_t> {
    if (src >= in.size()) return std::nullopt;
    e.used_in[src] = true;
    return in[src++];
  };
  auto why = [](absl::string_view text) { return absl::InvalidArgumentError(text); };
  for (size_t i = 0; i < newshape.size(); ++i) {
    const int64_t v = newshape[i];
    if (v > 0 || (v == kCopyDim && allowzero)) {
      push(v, false);
      ++src;
    } else if (v == kCopyDim) {
      std::optional<int64_t> d = take_input();
      if (!d) return why("0 past the input's rank");
      push(*d, true);
    } else if (v == kInferDim) {
      if (e.infer >= 0) return why("more than one -1");
      e.infer = static_cast<int>(e.dims.size());
      push(1, false);
      ++src;
    } else if (v == kCopyRest) {
      while (std::optional<int64_t> d = take_input()) push(*d, true);
    } else if (v == kMergeDims) {
      std::optional<int64_t> d1 = take_input(), d2 = take_input();
      int64_t merged;
      if (!d1 || !d2) return why("-3 needs two input extents");
      if (__builtin_mul_overflow(*d1, *d2, &merged)) return why("extent overflows");
      push(merged, true);
    } else if (v == kSplitDim) {
      std::optional<int64_t> d0 = take_input();
      if (!d0 || i + 2 >= newshape.size()) return why("-4 needs an input extent and two values");
      int64_t d1 = newshape[++i], d2 = newshape[++i], product;
      if ((d1 == -1 && d2 == -1) || d1 < -1 || d2 < -1 || d1 == 0 || d2 == 0) {
        return why("-4 takes two positive values, at most one of them -1");
      }
      if (d1 == -1) d1 = *d0 / d2;
      if (d2 == -1) d2 = *d0 / d1;
      if (__builtin_mul_overflow(d1, d2, &product) || product != *d0) {
        return why("-4 values do not multiply to the input extent");
      }
      push(d1, true);
      push(d2, true);
    } else {
      return why(absl::StrFormat("unsupported special value %d", v));
    }
  }
  return e;
}

// Follows Relay's InferNewShape: the -1 extent is the product of the input extents not
// consumed by 0, -2, -3 or -4 divided by the product of the output extents not derived
// from input ones. That makes reshape(x[0, 12, 64], [0, -1]) give [0, 768] where a
// plain count division would be 0 / 0.
absl::StatusOr<Shape> InferReshape(std::string_view op, absl::Span<const int64_t> in,
                                   absl::Span<const int64_t> newshape, bool allowzero) {
  auto fail = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: cannot reshape %s into [%s]: %s", op,
                                                      ShapeToString(in),
                                                      absl::StrJoin(newshape, ", "), why));
  };
  absl::StatusOr<ExpandedShape> e = ExpandSpecialValues(in, newshape, allowzero);
  if (!e.ok()) return fail(e.status().message());
  Shape& out = e->dims;
  if (e->infer >= 0) {
    int64_t numerator = 1, denominator = 1;
    bool overflow = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!e->used_in[i]) overflow |= __builtin_mul_overflow(numerator, in[i], &numerator);
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!e->derived[i]) overflow |= __builtin_mul_overflow(denominator, out[i], &denominator);
    }
    if (overflow) return fail("extent overflows");
    if (denominator == 0 || numerator % denominator != 0) return fail("-1 has no exact extent");
    out[e->infer] = numerator / denominator;
  }
  absl::StatusOr<int64_t> in_count = ShapeNumElements(in);
  absl::StatusOr<int64_t> out_count = ShapeNumElements(out);
  if (!out_count.ok()) return fail(out_count.status().message());
  if (*in_count != *out_count) {
    return fail(absl::StrFormat("%d elements vs %d", *in_count, *out_count));
  }
  return out;
}

// Binds `newshape` (unless `kDynamic`: dyn.reshape takes the shape as an input) and
// `allowzero`.
template <bool kDynamic>
absl::StatusOr<std::shared_ptr<const void>> BindReshape(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(kDynamic ? CheckKnownAttrs(attrs, {"allowzero"})
                                 : CheckKnownAttrs(attrs, {"newshape", "allowzero"}));
  auto state = std::make_shared<ReshapeState>();
  if constexpr (!kDynamic) {
    DYNVM_ASSIGN_OR_RETURN(state->newshape, GetIntsAttr(attrs, "newshape"));
  }
  DYNVM_ASSIGN_OR_RETURN(int64_t allowzero, GetIntAttr(attrs, "allowzero", 0));
  state->allowzero = allowzero != 0;
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<Shape> ReshapeShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  const auto& s = *static_cast<const ReshapeState*>(state);
  return InferReshape("reshape", inputs[0]->shape(), s.newshape, s.allowzero);
}

absl::StatusOr<Shape> DynReshapeShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  const auto& s = *static_cast<const ReshapeState*>(state);
  DYNVM_ASSIGN_OR_RETURN(Dims newshape,
                         internal::ReadIntVector("dyn.reshape", "shape", *inputs[1]));
  return InferReshape("dyn.reshape", inputs[0]->shape(), newshape, s.allowzero);
}

// The kernel of every op whose output holds the input's elements in the same order
// (reshape, squeeze, expand_dims and their dyn.* forms): a copy.
template <const char* kName, InferShapeFn kInfer>
absl::Status CopyKernel(const KernelCall& call) {
  const NDArrayObj& in = *call.args[0];
  const NDArrayObj& out = *call.args[call.num_inputs];
  DYNVM_ASSIGN_OR_RETURN(Shape shape, kInfer(call.state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(CheckOutput(kName, out, in.dtype(), shape));
  internal::ParallelCopy(out.data(), in.data(), in.nbytes(), *call.pool);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// squeeze, expand_dims

struct SqueezeState {
  std::optional<std::vector<int64_t>> axes;  // absent: every axis of extent 1
};

absl::StatusOr<std::shared_ptr<const void>> BindSqueeze(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis"}));
  auto state = std::make_shared<SqueezeState>();
  if (attrs.contains("axis")) {
    DYNVM_ASSIGN_OR_RETURN(state->axes, GetIntsAttr(attrs, "axis"));
  }
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<Shape> SqueezeShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  const auto& s = *static_cast<const SqueezeState*>(state);
  const Shape& in = inputs[0]->shape();
  const int rank = static_cast<int>(in.size());
  absl::InlinedVector<bool, kMaxRank> drop(in.size(), !s.axes.has_value());
  if (s.axes) {
    for (int64_t a : *s.axes) {
      DYNVM_ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis("squeeze", a, rank));
      if (in[axis] != 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "squeeze: axis %d of %s has extent %d, not 1", a, ShapeToString(in), in[axis]));
      }
      drop[axis] = true;
    }
  }
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (!(drop[i] && in[i] == 1)) out.push_back(in[i]);
  }
  return out;
}

struct ExpandDimsState {
  int64_t axis;
  int64_t num_newaxis;
};

absl::StatusOr<std::shared_ptr<const void>> BindExpandDims(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "num_newaxis"}));
  auto state = std::make_shared<ExpandDimsState>();
  DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis"));
  DYNVM_ASSIGN_OR_RETURN(state->num_newaxis, GetIntAttr(attrs, "num_newaxis", 1));
  if (state->num_newaxis < 0 || state->num_newaxis > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'num_newaxis' is %d: expected 0 to %d", state->num_newaxis, kMaxRank));
  }
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<Shape> ExpandDimsShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  const auto& s = *static_cast<const ExpandDimsState*>(state);
  const Shape& in = inputs[0]->shape();
  // The axis counts positions in the output of one new axis: [-rank - 1, rank].
  DYNVM_ASSIGN_OR_RETURN(
      int axis, internal::NormalizeAxis("expand_dims", s.axis, static_cast<int>(in.size()) + 1));
  if (in.size() + s.num_newaxis > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expand_dims: rank %d plus %d new axes exceeds the maximum rank %d",
                        in.size(), s.num_newaxis, kMaxRank));
  }
  Shape out(in.begin(), in.begin() + axis);
  out.insert(out.end(), static_cast<size_t>(s.num_newaxis), 1);
  out.insert(out.end(), in.begin() + axis, in.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// dyn.squeeze, dyn.expand_dims: ONNX Squeeze and Unsqueeze (opset 13) whose axes are a
// run-time input

// Which of `rank` axes `axes` names, each normalised against `rank` (negative counts
// from the end); an axis out of range or named twice is InvalidArgument.
absl::StatusOr<absl::InlinedVector<bool, kMaxRank>> AxesMask(std::string_view op,
                                                             absl::Span<const int64_t> axes,
                                                             int rank) {
  absl::InlinedVector<bool, kMaxRank> named(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    DYNVM_ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(op, a, rank));
    if (named[axis]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: axes [%s] name axis %d twice: expected distinct axes of rank %d", op,
                          absl::StrJoin(axes, ", "), axis, rank));
    }
    named[axis] = true;
  }
  return named;
}

// Unlike squeeze's attribute, empty axes squeeze nothing: the length of the axes is the
// number of axes removed, which is what lets the relation know the output's rank.
absl::StatusOr<Shape> DynSqueezeShape(const void*, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(Dims axes, internal::ReadIntVector("dyn.squeeze", "axes", *inputs[1]));
  const Shape& in = inputs[0]->shape();
  const int rank = static_cast<int>(in.size());
  DYNVM_ASSIGN_OR_RETURN(auto drop, AxesMask("dyn.squeeze", axes, rank));
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (in[axis] != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dyn.squeeze: axis %d of %s has extent %d, not 1", a, ShapeToString(in), in[axis]));
    }
  }
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return out;
}

// The axes count positions in the output (ONNX Unsqueeze), so their order does not
// matter: each names one of the rank + len(axes) output axes that gets extent 1.
absl::StatusOr<Shape> DynExpandDimsShape(const void*, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(Dims axes, internal::ReadIntVector("dyn.expand_dims", "axes", *inputs[1]));
  const Shape& in = inputs[0]->shape();
  // Checked before the mask is sized by it: the axes tensor may be arbitrarily long.
  if (in.size() + axes.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("dyn.expand_dims: rank %d plus %d new axes exceeds the maximum rank %d",
                        in.size(), axes.size(), kMaxRank));
  }
  const int rank = static_cast<int>(in.size() + axes.size());
  DYNVM_ASSIGN_OR_RETURN(auto inserted, AxesMask("dyn.expand_dims", axes, rank));
  Shape out;
  size_t next = 0;  // distinct axes leave exactly in.size() positions for the input
  for (int i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[next++]);
  return out;
}

// ---------------------------------------------------------------------------------------
// transpose

struct TransposeState {
  std::vector<int64_t> axes;  // empty: reverse the axes
};

absl::StatusOr<std::shared_ptr<const void>> BindTranspose(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axes"}));
  auto state = std::make_shared<TransposeState>();
  DYNVM_ASSIGN_OR_RETURN(state->axes, GetIntsAttr(attrs, "axes", {}));
  return std::shared_ptr<const void>(std::move(state));
}

// Output axis i is input axis perm[i].
absl::StatusOr<Dims> TransposePerm(const TransposeState& s, int rank) {
  Dims perm(static_cast<size_t>(rank));
  if (s.axes.empty()) {
    for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    return perm;
  }
  auto fail = [&] {
    return absl::InvalidArgumentError(
        absl::StrFormat("transpose: axes [%s] are not a permutation of the %d axes of the input",
                        absl::StrJoin(s.axes, ", "), rank));
  };
  if (s.axes.size() != static_cast<size_t>(rank)) return fail();
  absl::InlinedVector<bool, kMaxRank> seen(static_cast<size_t>(rank), false);
  for (int i = 0; i < rank; ++i) {
    absl::StatusOr<int> axis = internal::NormalizeAxis("transpose", s.axes[i], rank);
    if (!axis.ok() || seen[*axis]) return fail();
    seen[*axis] = true;
    perm[i] = *axis;
  }
  return perm;
}

absl::StatusOr<Shape> TransposeShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  const Shape& in = inputs[0]->shape();
  DYNVM_ASSIGN_OR_RETURN(Dims perm, TransposePerm(*static_cast<const TransposeState*>(state),
                                                  static_cast<int>(in.size())));
  Shape out;
  for (int64_t p : perm) out.push_back(in[p]);
  // Valid extents in another order may not be: [0, n, n] is, [n, n, 0] overflows.
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape("transpose", out));
  return out;
}

absl::Status TransposeKernel(const KernelCall& call) {
  const NDArrayObj& in = *call.args[0];
  const NDArrayObj& out = *call.args[1];
  DYNVM_ASSIGN_OR_RETURN(Shape shape, TransposeShape(call.state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(CheckOutput("transpose", out, in.dtype(), shape));
  DYNVM_ASSIGN_OR_RETURN(Dims perm,
                         TransposePerm(*static_cast<const TransposeState*>(call.state), in.ndim()));
  const Dims in_strides = internal::ContiguousStrides(in.shape());
  Dims src_strides;
  for (int64_t p : perm) src_strides.push_back(in_strides[p]);
  internal::CopyStrided(DTypeSize(in.dtype()), shape, out.data(),
                        internal::ContiguousStrides(shape), in.data(), src_strides, *call.pool);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// broadcast_to, dyn.broadcast_to

struct BroadcastToState {
  Shape shape;
};

absl::StatusOr<std::shared_ptr<const void>> BindBroadcastTo(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"shape"}));
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, GetIntsAttr(attrs, "shape"));
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape("attribute 'shape'", shape));
  return std::shared_ptr<const void>(
      std::make_shared<BroadcastToState>(BroadcastToState{Shape(shape.begin(), shape.end())}));
}

// `target` if `in` broadcasts to exactly it.
absl::StatusOr<Shape> CheckBroadcastTo(std::string_view op, const Shape& in,
                                       absl::Span<const int64_t> target) {
  absl::StatusOr<Shape> both = BroadcastShapes(in, target);
  if (!both.ok() || absl::MakeConstSpan(*both) != target) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: shape %s does not broadcast to %s", op,
                                                      ShapeToString(in), ShapeToString(target)));
  }
  return *both;
}

absl::StatusOr<Shape> BroadcastToShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  return CheckBroadcastTo("broadcast_to", inputs[0]->shape(),
                          static_cast<const BroadcastToState*>(state)->shape);
}

absl::StatusOr<Shape> DynBroadcastToShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(Shape target, internal::ReadShapeTensor("dyn.broadcast_to", *inputs[1]));
  return CheckBroadcastTo("dyn.broadcast_to", inputs[0]->shape(), target);
}

template <const char* kName, InferShapeFn kInfer>
absl::Status BroadcastToKernel(const KernelCall& call) {
  const NDArrayObj& in = *call.args[0];
  const NDArrayObj& out = *call.args[call.num_inputs];
  DYNVM_ASSIGN_OR_RETURN(Shape shape, kInfer(call.state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(CheckOutput(kName, out, in.dtype(), shape));
  if (out.num_elements() == 0) return absl::OkStatus();
  internal::CopyStrided(DTypeSize(in.dtype()), shape, out.data(),
                        internal::ContiguousStrides(shape), in.data(),
                        BroadcastStrides(in.shape(), shape), *call.pool);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// tile

struct TileState {
  std::vector<int64_t> reps;
  bool reps_input = false;  // dyn.tile: the repetitions are the second input
};

absl::Status CheckReps(std::string_view op, absl::Span<const int64_t> reps) {
  for (int64_t r : reps) {
    if (r < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: reps [%s] has a negative value", op, absl::StrJoin(reps, ", ")));
    }
  }
  if (reps.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: reps has %d values: at most %d", op, reps.size(), kMaxRank));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const void>> BindTile(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"reps"}));
  auto state = std::make_shared<TileState>();
  DYNVM_ASSIGN_OR_RETURN(state->reps, GetIntsAttr(attrs, "reps"));
  DYNVM_RETURN_IF_ERROR(CheckReps("tile", state->reps));
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<std::shared_ptr<const void>> BindDynTile(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {}));
  auto state = std::make_shared<TileState>();
  state->reps_input = true;
  return std::shared_ptr<const void>(std::move(state));
}

// The call's repetitions: the bound ones, or dyn.tile's second input.
absl::StatusOr<TileState> CallTileState(const void* bound, absl::Span<NDArrayObj* const> inputs) {
  const auto& state = *static_cast<const TileState*>(bound);
  if (!state.reps_input) return state;
  DYNVM_ASSIGN_OR_RETURN(const Dims reps, internal::ReadIntVector("dyn.tile", "reps", *inputs[1]));
  DYNVM_RETURN_IF_ERROR(CheckReps("dyn.tile", reps));
  return TileState{std::vector<int64_t>(reps.begin(), reps.end()), true};
}

// The input's extents and the repetitions, both left-padded with 1s to a common rank
// (numpy's rule).
struct TileDims {
  Shape in, reps;
};

TileDims AlignTile(const TileState& s, const Shape& in) {
  const size_t rank = std::max(in.size(), s.reps.size());
  TileDims t{Shape(rank, 1), Shape(rank, 1)};
  std::copy(in.begin(), in.end(), t.in.end() - in.size());
  std::copy(s.reps.begin(), s.reps.end(), t.reps.end() - s.reps.size());
  return t;
}

absl::StatusOr<Shape> TileShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(const TileState s, CallTileState(state, inputs));
  const TileDims t = AlignTile(s, inputs[0]->shape());
  Shape out(t.in.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (__builtin_mul_overflow(t.in[i], t.reps[i], &out[i])) out[i] = -1;
  }
  absl::Status valid = ShapeNumElements(out).status();
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("tile: %s repeated [%s] is too large",
                                                      ShapeToString(inputs[0]->shape()),
                                                      absl::StrJoin(t.reps, ", ")));
  }
  return out;
}

absl::Status TileKernel(const KernelCall& call) {
  const NDArrayObj& in = *call.args[0];
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_ASSIGN_OR_RETURN(Shape shape, TileShape(call.state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(CheckOutput("tile", out, in.dtype(), shape));
  // Output axis i of extent reps[i] * in[i] is the pair (repetition, position), which
  // row-major order lays out exactly as the output; the source ignores the repetition.
  DYNVM_ASSIGN_OR_RETURN(const TileState state, CallTileState(call.state, call.inputs()));
  const TileDims t = AlignTile(state, in.shape());
  const Dims in_strides = internal::ContiguousStrides(t.in);
  Dims view, src_strides;
  for (size_t i = 0; i < t.in.size(); ++i) {
    view.insert(view.end(), {t.reps[i], t.in[i]});
    src_strides.insert(src_strides.end(), {0, in_strides[i]});
  }
  internal::CopyStrided(DTypeSize(in.dtype()), view, out.data(), internal::ContiguousStrides(view),
                        in.data(), src_strides, *call.pool);
  return absl::OkStatus();
}

constexpr char kReshape[] = "reshape";
constexpr char kDynReshape[] = "dyn.reshape";
constexpr char kSqueeze[] = "squeeze";
constexpr char kExpandDims[] = "expand_dims";
constexpr char kDynSqueeze[] = "dyn.squeeze";
constexpr char kDynExpandDims[] = "dyn.expand_dims";
constexpr char kBroadcastTo[] = "broadcast_to";
constexpr char kDynBroadcastTo[] = "dyn.broadcast_to";

}  // namespace

absl::Status RegisterTransformKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {kReshape, 1, 1, CopyKernel<kReshape, ReshapeShape>, BindReshape<false>,
       SingleShapeFn<ReshapeShape>},
      {kDynReshape, 2, 1, CopyKernel<kDynReshape, DynReshapeShape>, BindReshape<true>,
       SingleShapeFn<DynReshapeShape>},
      {kSqueeze, 1, 1, CopyKernel<kSqueeze, SqueezeShape>, BindSqueeze,
       SingleShapeFn<SqueezeShape>},
      {kExpandDims, 1, 1, CopyKernel<kExpandDims, ExpandDimsShape>, BindExpandDims,
       SingleShapeFn<ExpandDimsShape>},
      {kDynSqueeze, 2, 1, CopyKernel<kDynSqueeze, DynSqueezeShape>, nullptr,
       SingleShapeFn<DynSqueezeShape>},
      {kDynExpandDims, 2, 1, CopyKernel<kDynExpandDims, DynExpandDimsShape>, nullptr,
       SingleShapeFn<DynExpandDimsShape>},
      {"transpose", 1, 1, TransposeKernel, BindTranspose, SingleShapeFn<TransposeShape>},
      {kBroadcastTo, 1, 1, BroadcastToKernel<kBroadcastTo, BroadcastToShape>, BindBroadcastTo,
       SingleShapeFn<BroadcastToShape>},
      {kDynBroadcastTo, 2, 1, BroadcastToKernel<kDynBroadcastTo, DynBroadcastToShape>, nullptr,
       SingleShapeFn<DynBroadcastToShape>},
      {"tile", 1, 1, TileKernel, BindTile, SingleShapeFn<TileShape>},
      {"dyn.tile", 2, 1, TileKernel, BindDynTile, SingleShapeFn<TileShape>},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
