// The object-detection kernels, f32: vision.all_class_non_max_suppression (ONNX
// NonMaxSuppression) and vision.roi_align (ONNX RoiAlign). Both follow ONNX's reference
// implementations (onnx/reference/ops/op_non_max_suppression.py and op_roi_align.py,
// ports of ONNX Runtime's CPU kernels) operation for operation, so that ties, boxes of
// no area and samples off the image come out as there.
//
// vision.all_class_non_max_suppression(boxes [B, N, 4], scores [B, C, N],
//     max_output_boxes_per_class (i64), iou_threshold (f32) [, score_threshold (f32)])
//     -> selected [K, 3] i64
//   The three scalars hold one element, or none: then 0, 0 and no score filter. For each
//   batch b, then each class c, the boxes scoring above score_threshold (every box
//   without one; never a NaN score) are visited by descending score, ties by ascending
//   index; a box is kept unless its IoU with a box already kept for (b, c) exceeds
//   iou_threshold, until max_output_boxes_per_class are kept. Each kept box is a row
//   (b, c, box). K depends on the values: the shape function runs the selection to count
//   them. The IoU is computed in float as the reference does; a box is [y1, x1, y2, x2]
//   (either corner order), or [x_center, y_center, width, height] with center_point_box.
//
// vision.roi_align(data [N, C, H, W], rois [R, 4], batch_indices [R] (i32 or i64))
//     -> [R, C, pooled_size[0], pooled_size[1]]
//   Roi r, [x1, y1, x2, y2] scaled by spatial_scale (less 0.5 when `aligned`, ONNX's
//   half_pixel; unaligned rois are at least 1 x 1), of image batch_indices[r], is cut
//   into bins; each bin averages (mode avg) or takes the maximum (mode max) of a grid of
//   sample_ratio x sample_ratio bilinear samples (sample_ratio <= 0: ceil(bin extent)
//   per axis). As in the reference, a sample more than one pixel off the image counts as
//   0, and max mode takes the maximum of the four weighted corner terms of each sample,
//   not of the interpolated values. Coordinates and sums are in double, as the
//   reference's numpy scalars are.
//
// Non-maximum suppression runs the (batch, class) pairs in parallel, each into its own
// slice of a scratch buffer, then concatenates them. RoiAlign builds per roi the tables
// of sample positions along each axis (the bilinear weights are separable) and runs the
// channels in parallel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

// ---------------------------------------------------------------------------------------
// vision.all_class_non_max_suppression

constexpr std::string_view kNms = "vision.all_class_non_max_suppression";

struct NmsState {
  bool center_point_box = false;
};

absl::StatusOr<std::shared_ptr<const void>> BindNms(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"center_point_box"}));
  NmsState s;
  DYNVM_ASSIGN_OR_RETURN(s.center_point_box, GetBoolAttr(attrs, "center_point_box", false));
  return std::make_shared<const NmsState>(s);
}

// One call's problem: the inputs, checked, and the scalars read.
struct NmsProblem {
  const float* boxes;   // [B, N, 4]
  const float* scores;  // [B, C, N]
  int64_t batches, classes, boxes_per_batch;
  int64_t max_per_class;  // >= 0
  float iou_threshold;
  std::optional<float> score_threshold;
  bool center_point_box;

  // How many boxes one (batch, class) pair may keep.
  int64_t Capacity() const { return std::min(max_per_class, boxes_per_batch); }
};

// InvalidArgument unless scalar input `what` has `dtype` and at most one element; true
// when it has one.
absl::StatusOr<bool> CheckOptionalScalar(std::string_view what, const NDArrayObj& t, DType dtype) {
  DYNVM_RETURN_IF_ERROR(internal::CheckDType(kNms, what, t, dtype));
  if (t.num_elements() > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s must hold one value or none, got shape %s", kNms, what, ShapeToString(t.shape())));
  }
  return t.num_elements() == 1;
}

absl::StatusOr<NmsProblem> MakeNmsProblem(const void* state, absl::Span<NDArrayObj* const> in) {
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(
      kNms, static_cast<int>(in.size()), {4, 5},
      "boxes, scores, max_output_boxes_per_class, iou_threshold[, score_threshold]"));
  const NDArrayObj& boxes = *in[0];
  const NDArrayObj& scores = *in[1];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kNms, "boxes", boxes));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kNms, "scores", scores));
  if (boxes.ndim() != 3 || boxes.shape()[2] != 4 || scores.ndim() != 3 ||
      scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: boxes %s and scores %s must be [batches, boxes, 4] and [batches, classes, boxes]",
        kNms, ShapeToString(boxes.shape()), ShapeToString(scores.shape())));
  }
  NmsProblem p{.boxes = boxes.data_as<float>(),
               .scores = scores.data_as<float>(),
               .batches = boxes.shape()[0],
               .classes = scores.shape()[1],
               .boxes_per_batch = boxes.shape()[1],
               .max_per_class = 0,
               .iou_threshold = 0.0f,
               .score_threshold = std::nullopt,
               .center_point_box = static_cast<const NmsState*>(state)->center_point_box};
  DYNVM_ASSIGN_OR_RETURN(const bool has_max,
                         CheckOptionalScalar("max_output_boxes_per_class", *in[2], DType::kI64));
  if (has_max) p.max_per_class = std::max(in[2]->data_as<int64_t>()[0], int64_t{0});
  DYNVM_ASSIGN_OR_RETURN(const bool has_iou, CheckOptionalScalar("iou_threshold", *in[3], DType::kF32));
  if (has_iou) p.iou_threshold = in[3]->data_as<float>()[0];
  if (in.size() == 5) {
    DYNVM_ASSIGN_OR_RETURN(const bool has_score,
                           CheckOptionalScalar("score_threshold", *in[4], DType::kF32));
    if (has_score) p.score_threshold = in[4]->data_as<float>()[0];
  }
  return p;
}

// The lower and upper of two coordinates, as the reference orders them.
std::pair<float, float> MinMax(float a, float b) { return a >= b ? std::pair{b, a} : std::pair{a, b}; }

// Whether box `a` suppresses box `b` (each 4 floats): their IoU exceeds `threshold`.
// The reference's float arithmetic step for step; boxes of no area never suppress.
bool SuppressByIou(const float* a, const float* b, bool center_point_box, float threshold) {
  float ax0, ax1, bx0, bx1, ay0, ay1, by0, by1;
  if (center_point_box) {
    const float aw = a[2] / 2, ah = a[3] / 2, bw = b[2] / 2, bh = b[3] / 2;
    ax0 = a[0] - aw, ax1 = a[0] + aw, bx0 = b[0] - bw, bx1 = b[0] + bw;
    ay0 = a[1] - ah, ay1 = a[1] + ah, by0 = b[1] - bh, by1 = b[1] + bh;
  } else {
    std::tie(ax0, ax1) = MinMax(a[1], a[3]);
    std::tie(bx0, bx1) = MinMax(b[1], b[3]);
    std::tie(ay0, ay1) = MinMax(a[0], a[2]);
    std::tie(by0, by1) = MinMax(b[0], b[2]);
  }
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  const float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  const float intersection = (ix1 - ix0) * (iy1 - iy0);
  if (intersection <= 0) return false;
  const float area_a = (ax1 - ax0) * (ay1 - ay0);
  const float area_b = (bx1 - bx0) * (by1 - by0);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

// Selects the boxes of batch `b`, class `c` into `kept` (Capacity() entries), in order;
// `order` is scratch for N indices. Returns how many were kept.
int64_t SelectBoxes(const NmsProblem& p, int64_t b, int64_t c, int64_t* order, int64_t* kept) {
  const int64_t n = p.boxes_per_batch;
  const float* scores = p.scores + (b * p.classes + c) * n;
  const float* boxes = p.boxes + b * n * 4;
  int64_t candidates = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(scores[i]) || (p.score_threshold && !(scores[i] > *p.score_threshold))) continue;
    order[candidates++] = i;
  }
  std::sort(order, order + candidates, [scores](int64_t i, int64_t j) {
    return scores[i] > scores[j] || (scores[i] == scores[j] && i < j);
  });
  int64_t count = 0;
  for (int64_t k = 0; k < candidates && count < p.max_per_class; ++k) {
    const float* box = boxes + order[k] * 4;
    bool keep = true;
    for (int64_t j = 0; j < count && keep; ++j) {
      keep = !SuppressByIou(box, boxes + kept[j] * 4, p.center_point_box, p.iou_threshold);
    }
    if (keep) kept[count++] = order[k];
  }
  return count;
}

absl::Status NmsShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const NmsProblem p, MakeNmsProblem(call.state, call.input_span()));
  call.output_shapes[0] = {0, 3};
  if (p.batches == 0 || p.classes == 0) return absl::OkStatus();  // N may be any extent then
  int64_t* order = ThreadScratch<int64_t>(ScratchSlot::kCall, p.boxes_per_batch + p.Capacity());
  int64_t total = 0;
  for (int64_t b = 0; b < p.batches; ++b) {
    for (int64_t c = 0; c < p.classes; ++c) {
      total += SelectBoxes(p, b, c, order, order + p.boxes_per_batch);
    }
  }
  call.output_shapes[0] = {total, 3};
  return absl::OkStatus();
}

absl::Status NmsKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const NmsProblem p, MakeNmsProblem(call.state, call.inputs()));
  const NDArrayObj& out = *call.outputs()[0];
  // Pair q keeps its boxes in kept[q * capacity, ...), counts[q] of them.
  const int64_t pairs = p.batches * p.classes, capacity = p.Capacity();
  int64_t* counts = ThreadScratch<int64_t>(ScratchSlot::kCall, pairs * (1 + capacity));
  int64_t* kept = counts + pairs;
  call.pool->ParallelFor(pairs, 1, [&](int64_t begin, int64_t end) {
    int64_t* order = ThreadScratch<int64_t>(ScratchSlot::kTask, p.boxes_per_batch);
    for (int64_t q = begin; q < end; ++q) {
      counts[q] = SelectBoxes(p, q / p.classes, q % p.classes, order, kept + q * capacity);
    }
  });
  int64_t total = 0;
  for (int64_t q = 0; q < pairs; ++q) total += counts[q];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kNms, out, DType::kI64, {total, 3}));
  int64_t* row = out.data_as<int64_t>();
  for (int64_t q = 0; q < pairs; ++q) {
    for (int64_t k = 0; k < counts[q]; ++k, row += 3) {
      row[0] = q / p.classes;
      row[1] = q % p.classes;
      row[2] = kept[q * capacity + k];
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// vision.roi_align

constexpr std::string_view kRoiAlign = "vision.roi_align";

// The most sample positions along one axis of a roi (its bins times the samples per
// bin): bounds the per-call tables when an adaptive grid meets a huge roi.
constexpr int64_t kMaxAxisSamples = int64_t{1} << 20;

struct RoiAlignState {
  int64_t out_h = 1, out_w = 1;
  double spatial_scale = 1.0;
  int64_t sample_ratio = -1;  // <= 0: adaptive
  bool max_mode = false;
  bool aligned = false;  // ONNX's half_pixel
};

absl::StatusOr<std::shared_ptr<const void>> BindRoiAlign(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(
      attrs, {"pooled_size", "spatial_scale", "sample_ratio", "mode", "layout", "aligned"}));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "layout", "NCHW"));
  RoiAlignState s;
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> size, GetIntsAttr(attrs, "pooled_size"));
  if (size.size() != 2 || size[0] < 1 || size[1] < 1 || size[0] >= nn::kMaxWindowAttr ||
      size[1] >= nn::kMaxWindowAttr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'pooled_size' must be [height, width] in [1, %d), got [%s]",
                        nn::kMaxWindowAttr, absl::StrJoin(size, ", ")));
  }
  s.out_h = size[0];
  s.out_w = size[1];
  DYNVM_ASSIGN_OR_RETURN(s.spatial_scale, GetFloatAttr(attrs, "spatial_scale", 1.0));
  if (!std::isfinite(s.spatial_scale)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'spatial_scale' must be finite, got %g", s.spatial_scale));
  }
  DYNVM_ASSIGN_OR_RETURN(s.sample_ratio, GetIntAttr(attrs, "sample_ratio", -1));
  if (s.sample_ratio >= nn::kMaxWindowAttr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'sample_ratio' must be below %d, got %d", nn::kMaxWindowAttr, s.sample_ratio));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, GetStringAttr(attrs, "mode", "avg"));
  if (mode != "avg" && mode != "max") {
    return absl::InvalidArgumentError(
        absl::StrFormat("unsupported mode '%s': expected avg or max", mode));
  }
  s.max_mode = mode == "max";
  DYNVM_ASSIGN_OR_RETURN(s.aligned, GetBoolAttr(attrs, "aligned", false));
  return std::make_shared<const RoiAlignState>(s);
}

absl::StatusOr<Shape> RoiAlignShape(const void* state, absl::Span<NDArrayObj* const> in) {
  const auto& s = *static_cast<const RoiAlignState*>(state);
  const NDArrayObj& x = *in[0];
  const NDArrayObj& rois = *in[1];
  const NDArrayObj& indices = *in[2];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kRoiAlign, "data", x));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kRoiAlign, "rois", rois));
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType(kRoiAlign, "batch_indices", indices));
  if (x.ndim() != 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: data must have rank 4 (NCHW), got shape %s", kRoiAlign, ShapeToString(x.shape())));
  }
  if (rois.ndim() != 2 || rois.shape()[1] != 4 || indices.ndim() != 1 ||
      indices.shape()[0] != rois.shape()[0]) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: rois %s and batch_indices %s must be [rois, 4] and [rois]", kRoiAlign,
                        ShapeToString(rois.shape()), ShapeToString(indices.shape())));
  }
  Shape out = {rois.shape()[0], x.shape()[1], s.out_h, s.out_w};
  if ((x.shape()[2] == 0 || x.shape()[3] == 0) && out[0] != 0 && out[1] != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot sample rois from the empty images %s", kRoiAlign, ShapeToString(x.shape())));
  }
  return out;
}

// A sample position along one axis: its two neighbouring pixels and their weights
// (1 - t and t); off the image (more than one pixel out), a sample of weight 0.
struct AxisSample {
  int64_t low = 0, high = 0;
  double hi_weight = 0.0, lo_weight = 0.0;  // t for `high`, 1 - t for `low`
  bool valid = false;
};

// The samples along an axis of `extent` pixels: `bins` bins of `bin` pixels from `start`,
// `grid` samples each, at the centres of the grid's cells.
void FillAxisSamples(double start, double bin, int64_t bins, int64_t grid, int64_t extent,
                     AxisSample* samples) {
  for (int64_t p = 0; p < bins; ++p) {
    for (int64_t i = 0; i < grid; ++i) {
      double v = start + static_cast<double>(p) * bin + (static_cast<double>(i) + 0.5) * bin /
                                                            static_cast<double>(grid);
      AxisSample& sample = samples[p * grid + i];
      sample = AxisSample{};
      if (v < -1.0 || v > static_cast<double>(extent)) continue;
      v = std::max(v, 0.0);
      sample.low = static_cast<int64_t>(v);
      if (sample.low >= extent - 1) {
        sample.high = sample.low = extent - 1;
        v = static_cast<double>(sample.low);
      } else {
        sample.high = sample.low + 1;
      }
      sample.hi_weight = v - static_cast<double>(sample.low);
      sample.lo_weight = 1.0 - sample.hi_weight;
      sample.valid = true;
    }
  }
}

// One roi's geometry: where its bins start and how large they are, and the samples per bin
// along each axis.
struct RoiGeometry {
  double start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
};

// The geometry of roi `r` (4 floats at `roi`), as the reference computes it;
// InvalidArgument for a roi that is not finite once scaled, or that needs more than
// kMaxAxisSamples samples along an axis.
absl::StatusOr<RoiGeometry> MakeRoiGeometry(const RoiAlignState& s, const float* roi, int64_t r) {
  const double offset = s.aligned ? 0.5 : 0.0;
  const double x1 = roi[0] * s.spatial_scale - offset, y1 = roi[1] * s.spatial_scale - offset;
  const double x2 = roi[2] * s.spatial_scale - offset, y2 = roi[3] * s.spatial_scale - offset;
  if (!std::isfinite(x1) || !std::isfinite(y1) || !std::isfinite(x2) || !std::isfinite(y2)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: roi %d [%g, %g, %g, %g] is not finite once scaled by %g", kRoiAlign, r, roi[0], roi[1],
        roi[2], roi[3], s.spatial_scale));
  }
  double height = y2 - y1, width = x2 - x1;
  if (!s.aligned) {  // malformed rois become 1 x 1
    height = std::max(height, 1.0);
    width = std::max(width, 1.0);
  }
  RoiGeometry g{.start_h = y1, .start_w = x1, .bin_h = height / static_cast<double>(s.out_h),
                .bin_w = width / static_cast<double>(s.out_w), .grid_h = 0, .grid_w = 0};
  // The adaptive grid is ceil(bin extent) samples, none for a bin of no extent.
  const double grid_h = s.sample_ratio > 0 ? static_cast<double>(s.sample_ratio) : std::ceil(g.bin_h);
  const double grid_w = s.sample_ratio > 0 ? static_cast<double>(s.sample_ratio) : std::ceil(g.bin_w);
  if (grid_h * static_cast<double>(s.out_h) > kMaxAxisSamples ||
      grid_w * static_cast<double>(s.out_w) > kMaxAxisSamples) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: roi %d [%g, %g, %g, %g] needs %g x %g samples per bin of %d x %d bins: at most %d "
        "samples along an axis",
        kRoiAlign, r, roi[0], roi[1], roi[2], roi[3], grid_h, grid_w, s.out_h, s.out_w,
        kMaxAxisSamples));
  }
  g.grid_h = static_cast<int64_t>(std::max(grid_h, 0.0));
  g.grid_w = static_cast<int64_t>(std::max(grid_w, 0.0));
  return g;
}

// Output bin (`ys`, `xs`: its samples along each axis) of one image plane of `width`
// columns.
float RoiBin(const RoiAlignState& s, const float* plane, int64_t width, const AxisSample* ys,
             int64_t grid_h, const AxisSample* xs, int64_t grid_w) {
  double value = 0.0;
  bool first = true;
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      const AxisSample& y = ys[iy];
      const AxisSample& x = xs[ix];
      // The reference's off-image sample: every position 0, every weight 0.
      const bool valid = y.valid && x.valid;
      const double w1 = valid ? y.lo_weight * x.lo_weight : 0.0;
      const double w2 = valid ? y.lo_weight * x.hi_weight : 0.0;
      const double w3 = valid ? y.hi_weight * x.lo_weight : 0.0;
      const double w4 = valid ? y.hi_weight * x.hi_weight : 0.0;
      const double v1 = w1 * plane[valid ? y.low * width + x.low : 0];
      const double v2 = w2 * plane[valid ? y.low * width + x.high : 0];
      const double v3 = w3 * plane[valid ? y.high * width + x.low : 0];
      const double v4 = w4 * plane[valid ? y.high * width + x.high : 0];
      if (!s.max_mode) {
        value += v1 + v2 + v3 + v4;
        continue;
      }
      // Python's max: the first of equals, and a NaN only where it comes first.
      double m = v1;
      for (const double v : {v2, v3, v4}) m = v > m ? v : m;
      value = first || m > value ? m : value;
      first = false;
    }
  }
  if (!s.max_mode) value /= static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
  return static_cast<float>(value);
}

absl::Status RoiAlignKernel(const KernelCall& call) {
  const auto& s = *static_cast<const RoiAlignState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, RoiAlignShape(call.state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kRoiAlign, call, {out_shape}));
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& indices = *call.args[2];
  const int64_t images = x.shape()[0], channels = x.shape()[1];
  const int64_t height = x.shape()[2], width = x.shape()[3];
  const int64_t bins = s.out_h * s.out_w;
  for (int64_t r = 0; r < out_shape[0]; ++r) {
    const int64_t image = indices.dtype() == DType::kI64 ? indices.data_as<int64_t>()[r]
                                                         : indices.data_as<int32_t>()[r];
    if (image < 0 || image >= images) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: batch index %d of roi %d out of range [0, %d)", kRoiAlign, image, r, images));
    }
    DYNVM_ASSIGN_OR_RETURN(const RoiGeometry g,
                           MakeRoiGeometry(s, call.args[1]->data_as<float>() + r * 4, r));
    auto* ys = static_cast<AxisSample*>(ThreadScratchBytes(
        ScratchSlot::kCall, (s.out_h * g.grid_h + s.out_w * g.grid_w) * sizeof(AxisSample)));
    AxisSample* xs = ys + s.out_h * g.grid_h;
    FillAxisSamples(g.start_h, g.bin_h, s.out_h, g.grid_h, height, ys);
    FillAxisSamples(g.start_w, g.bin_w, s.out_w, g.grid_w, width, xs);
    const float* planes = x.data_as<float>() + image * channels * height * width;
    float* out = call.outputs()[0]->data_as<float>() + r * channels * bins;
    call.pool->ParallelFor(channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        for (int64_t b = 0; b < bins; ++b) {
          out[c * bins + b] = RoiBin(s, planes + c * height * width, width,
                                     ys + b / s.out_w * g.grid_h, g.grid_h,
                                     xs + b % s.out_w * g.grid_w, g.grid_w);
        }
      }
    });
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterDetectionKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kNms),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 1,
                                                    .fn = NmsKernel,
                                                    .bind = BindNms,
                                                    .shape_fn = NmsShapeFn}));
  return registry.Register(KernelDef{.name = std::string(kRoiAlign),
                                     .num_inputs = 3,
                                     .num_outputs = 1,
                                     .fn = RoiAlignKernel,
                                     .bind = BindRoiAlign,
                                     .shape_fn = internal::SingleShapeFn<RoiAlignShape>});
}

}  // namespace dynvm::kernels
