// Tests of vision.all_class_non_max_suppression and vision.roi_align
// (kernels/nn/detection.cc): hand-computed cases that pin ONNX's semantics (the
// conformance suite's boxes, ties, thresholds, the weighted-corner max of RoiAlign), then
// random shapes — zero extents and extents of 1 included — against plain references
// ported here from ONNX's reference implementations (op_non_max_suppression.py, which
// pops the best box off a sorted list, and op_roi_align.py, which computes each sample's
// x and y together where the kernel uses per-axis tables), and the errors.
//
// Tolerances: selections are exact. RoiAlign's reference does the kernel's double
// arithmetic in the same order, so its outputs agree to rounding: 1e-6 relative.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

constexpr char kNms[] = "vision.all_class_non_max_suppression";
constexpr char kRoiAlign[] = "vision.roi_align";

// ---------------------------------------------------------------------------------------
// Non-maximum suppression

// The selected rows, flattened, or the error's message.
absl::StatusOr<std::vector<int64_t>> Nms(std::vector<NDArray> inputs, bool center_point_box = false) {
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel(kNms, {{"center_point_box", int64_t{center_point_box}}}, std::move(inputs), {DType::kI64});
  if (!out.ok()) return out.status();
  const NDArray& rows = (*out)[0];
  EXPECT_EQ(rows->ndim(), 2);
  EXPECT_EQ(rows->shape()[1], 3);
  return std::vector<int64_t>(rows->data_as<int64_t>(), rows->data_as<int64_t>() + rows->num_elements());
}

NDArray I64(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return TensorOf<int64_t>({n}, std::move(values));
}
NDArray F32(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return TensorOf<float>({n}, std::move(values));
}

// The boxes of ONNX's conformance cases: two clusters of three and one far box.
NDArray OnnxBoxes() {
  return TensorOf<float>({1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11,
                                     0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
}
NDArray OnnxScores() { return TensorOf<float>({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }

TEST(NonMaxSuppressionTest, HandComputed) {
  using Rows = std::vector<int64_t>;
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), I64({3}), F32({0.5f}), F32({0.0f})}),
            (Rows{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Scores must exceed the threshold strictly: 0.5 is not above 0.5.
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), I64({3}), F32({0.5f}), F32({0.5f})}), (Rows{0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), I64({2}), F32({0.5f})}), (Rows{0, 0, 3, 0, 0, 0}));
  // Without a score threshold even a negative score is a candidate; with 0, it is not.
  NDArray negative = TensorOf<float>({1, 1, 6}, {-0.9f, -0.75f, -0.6f, -0.95f, -0.5f, -0.3f});
  EXPECT_EQ(*Nms({OnnxBoxes(), negative, I64({1}), F32({0.5f})}), (Rows{0, 0, 5}));
  EXPECT_EQ(*Nms({OnnxBoxes(), negative, I64({1}), F32({0.5f}), F32({0.0f})}), Rows{});
  // Absent (empty) scalars: no box per class, and iou threshold 0.
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), I64({}), F32({})}), Rows{});
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), I64({-4}), F32({0.5f})}), Rows{});
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), I64({6}), F32({}), F32({})}), (Rows{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Rank-0 scalars are taken too.
  EXPECT_EQ(*Nms({OnnxBoxes(), OnnxScores(), TensorOf<int64_t>({}, {9}), TensorOf<float>({}, {1.0f})}),
            (Rows{0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
  // Identical boxes of equal scores: the lowest index wins.
  NDArray same = TensorOf<float>({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1});
  EXPECT_EQ(*Nms({same, TensorOf<float>({1, 1, 3}, {0.5f, 0.9f, 0.9f}), I64({3}), F32({0.5f})}),
            (Rows{0, 0, 1}));
  // Boxes of no area never suppress, nor are suppressed; a NaN score is never selected.
  NDArray flat = TensorOf<float>({1, 3, 4}, {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1});
  EXPECT_EQ(*Nms({flat, TensorOf<float>({1, 1, 3}, {0.9f, 0.8f, NAN}), I64({3}), F32({0.0f})}),
            (Rows{0, 0, 0, 0, 0, 1}));
  // Corners in either order; [x_center, y_center, width, height] with center_point_box.
  NDArray flipped = TensorOf<float>({1, 2, 4}, {1, 1, 0, 0, 0, 0.1f, 1, 1.1f});
  EXPECT_EQ(*Nms({flipped, TensorOf<float>({1, 1, 2}, {0.9f, 0.8f}), I64({3}), F32({0.5f})}), (Rows{0, 0, 0}));
  NDArray centred = TensorOf<float>({1, 2, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1});
  EXPECT_EQ(*Nms({centred, TensorOf<float>({1, 1, 2}, {0.9f, 0.8f}), I64({3}), F32({0.5f})}, true),
            (Rows{0, 0, 0}));
  // Batches, then classes, each in score order.
  NDArray two = TensorOf<float>({2, 2, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f,
                                            0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const NDArray one = OnnxBoxes();
  std::vector<float> b(one->data_as<float>(), one->data_as<float>() + 24);
  b.insert(b.end(), one->data_as<float>(), one->data_as<float>() + 24);
  EXPECT_EQ(*Nms({TensorOf<float>({2, 6, 4}, b), two, I64({2}), F32({0.5f})}),
            (Rows{0, 0, 3, 0, 0, 0, 0, 1, 5, 0, 1, 4, 1, 0, 3, 1, 0, 0, 1, 1, 5, 1, 1, 4}));
}

// ONNX's suppress_by_iou, in float.
bool ReferenceSuppress(const float* a, const float* b, bool center, float threshold) {
  float ax[2], ay[2], bx[2], by[2];
  if (center) {
    ax[0] = a[0] - a[2] / 2, ax[1] = a[0] + a[2] / 2, ay[0] = a[1] - a[3] / 2, ay[1] = a[1] + a[3] / 2;
    bx[0] = b[0] - b[2] / 2, bx[1] = b[0] + b[2] / 2, by[0] = b[1] - b[3] / 2, by[1] = b[1] + b[3] / 2;
  } else {
    ax[0] = std::min(a[1], a[3]), ax[1] = std::max(a[1], a[3]), ay[0] = std::min(a[0], a[2]);
    ay[1] = std::max(a[0], a[2]), bx[0] = std::min(b[1], b[3]), bx[1] = std::max(b[1], b[3]);
    by[0] = std::min(b[0], b[2]), by[1] = std::max(b[0], b[2]);
  }
  const float ix0 = std::max(ax[0], bx[0]), ix1 = std::min(ax[1], bx[1]);
  const float iy0 = std::max(ay[0], by[0]), iy1 = std::min(ay[1], by[1]);
  if (ix1 <= ix0 || iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (ax[1] - ax[0]) * (ay[1] - ay[0]), area_b = (bx[1] - bx[0]) * (by[1] - by[0]);
  const float uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

// ONNX's reference: per batch and class, the candidates sorted ascending (by score, ties
// by descending index) and popped from the back.
std::vector<int64_t> ReferenceNms(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batches,
                                  int64_t classes, int64_t n, int64_t max_per_class, float iou,
                                  const float* score_threshold, bool center) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = scores.data() + (b * classes + c) * n;
      std::vector<int64_t> candidates;
      for (int64_t i = 0; i < n; ++i) {
        if (score_threshold == nullptr || s[i] > *score_threshold) candidates.push_back(i);
      }
      std::sort(candidates.begin(), candidates.end(),
                [s](int64_t i, int64_t j) { return s[i] < s[j] || (s[i] == s[j] && i > j); });
      std::vector<int64_t> kept;
      while (!candidates.empty() && static_cast<int64_t>(kept.size()) < max_per_class) {
        const int64_t top = candidates.back();
        candidates.pop_back();
        bool selected = true;
        for (int64_t k : kept) {
          if (ReferenceSuppress(&boxes[(b * n + top) * 4], &boxes[(b * n + k) * 4], center, iou)) {
            selected = false;
            break;
          }
        }
        if (!selected) continue;
        kept.push_back(top);
        rows.insert(rows.end(), {b, c, top});
      }
    }
  }
  return rows;
}

TEST(NonMaxSuppressionTest, RandomAgainstReference) {
  std::mt19937 rng(17);
  for (int iter = 0; iter < 400; ++iter) {
    const int64_t batches = RandomInt(rng, 0, 2), classes = RandomInt(rng, 0, 3), n = RandomInt(rng, 0, 12);
    // Coordinates on a half-pixel grid and few distinct scores: overlaps, ties, flat boxes.
    std::vector<float> boxes(static_cast<size_t>(batches * n * 4)), scores(static_cast<size_t>(batches * classes * n));
    for (float& v : boxes) v = 0.5f * static_cast<float>(RandomInt(rng, 0, 8));
    for (float& v : scores) v = 0.25f * static_cast<float>(RandomInt(rng, -1, 4));
    const int64_t max_per_class = RandomInt(rng, -1, 6);
    const float iou = 0.1f * static_cast<float>(RandomInt(rng, 0, 9));
    const float score_threshold = 0.25f * static_cast<float>(RandomInt(rng, -1, 3));
    const bool has_score = RandomInt(rng, 0, 1) == 1, center = RandomInt(rng, 0, 1) == 1;
    std::vector<NDArray> inputs = {TensorOf<float>({batches, n, 4}, boxes),
                                   TensorOf<float>({batches, classes, n}, scores), I64({max_per_class}),
                                   F32({iou})};
    if (has_score) inputs.push_back(F32({score_threshold}));
    SCOPED_TRACE(::testing::Message() << "iteration " << iter << ": " << batches << " x " << classes << " x " << n);
    absl::StatusOr<std::vector<int64_t>> got = Nms(inputs, center);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, ReferenceNms(boxes, scores, batches, classes, n, std::max<int64_t>(max_per_class, 0), iou,
                                 has_score ? &score_threshold : nullptr, center));
  }
}

TEST(NonMaxSuppressionTest, Errors) {
  const NDArray boxes = OnnxBoxes(), scores = OnnxScores(), max = I64({3}), iou = F32({0.5f});
  ExpectInvalid(Nms({TensorOf<float>({1, 5, 4}, std::vector<float>(20)), scores, max, iou}),
                "boxes [1, 5, 4] and scores [1, 1, 6] must be [batches, boxes, 4] and [batches, classes, boxes]");
  ExpectInvalid(Nms({TensorOf<float>({1, 6, 3}, std::vector<float>(18)), scores, max, iou}), "must be [batches");
  ExpectInvalid(Nms({boxes, TensorOf<float>({2, 1, 6}, std::vector<float>(12)), max, iou}), "must be [batches");
  ExpectInvalid(Nms({boxes, scores, I64({3, 4}), iou}),
                "max_output_boxes_per_class must hold one value or none, got shape [2]");
  ExpectInvalid(Nms({boxes, scores, max, iou, F32({0, 1})}), "score_threshold must hold one value or none");
  ExpectInvalid(Nms({boxes, scores, F32({3}), iou}), "max_output_boxes_per_class");
  ExpectInvalid(Nms({boxes, scores, max, I64({0})}), "iou_threshold");
  ExpectInvalid(Nms({Empty({1, 6, 4}, DType::kF64), scores, max, iou}), "unsupported dtype f64");
  ExpectInvalid(Nms({boxes, scores, max}), "takes 4 or 5 inputs");
  ExpectInvalid(RunKernel(kNms, {{"center_point_box", int64_t{2}}}, {boxes, scores, max, iou}),
                "center_point_box");
  ExpectInvalid(CallWithOutputs(kNms, {}, {boxes, scores, max, iou}, {Empty({2, 3}, DType::kI64)}),
                "output 0 has shape [2, 3]");
  ExpectInvalid(CallWithOutputs(kNms, {}, {boxes, scores, max, iou}, {Empty({3, 3}, DType::kI32)}),
                "output 0 has dtype i32, expected i64");
}

// ---------------------------------------------------------------------------------------
// RoiAlign

struct RoiAlignCase {
  int64_t out_h = 1, out_w = 1, sample_ratio = 0;
  double spatial_scale = 1.0;
  bool max_mode = false, aligned = false;

  Attrs ToAttrs() const {
    return {{"pooled_size", std::vector<int64_t>{out_h, out_w}},
            {"sample_ratio", sample_ratio},
            {"spatial_scale", spatial_scale},
            {"mode", std::string(max_mode ? "max" : "avg")},
            {"aligned", int64_t{aligned}}};
  }
};

// ONNX's roi_align_forward, a sample at a time: positions and weights of its four
// corners, all 0 when it lies more than a pixel off the image.
std::vector<double> ReferenceRoiAlign(const RoiAlignCase& a, const std::vector<float>& x, int64_t channels,
                                      int64_t height, int64_t width, const std::vector<float>& rois,
                                      const std::vector<int64_t>& batch) {
  std::vector<double> out;
  const double offset = a.aligned ? 0.5 : 0.0;
  for (size_t r = 0; r < batch.size(); ++r) {
    const double sw = rois[r * 4] * a.spatial_scale - offset, sh = rois[r * 4 + 1] * a.spatial_scale - offset;
    double rw = rois[r * 4 + 2] * a.spatial_scale - offset - sw, rh = rois[r * 4 + 3] * a.spatial_scale - offset - sh;
    if (!a.aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(a.out_h), bw = rw / static_cast<double>(a.out_w);
    const int64_t gh = a.sample_ratio > 0 ? a.sample_ratio : static_cast<int64_t>(std::ceil(rh / a.out_h));
    const int64_t gw = a.sample_ratio > 0 ? a.sample_ratio : static_cast<int64_t>(std::ceil(rw / a.out_w));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = x.data() + (batch[r] * channels + c) * height * width;
      for (int64_t ph = 0; ph < a.out_h; ++ph) {
        for (int64_t pw = 0; pw < a.out_w; ++pw) {
          double value = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy) {
            for (int64_t ix = 0; ix < gw; ++ix) {
              double y = sh + ph * bh + (iy + 0.5) * bh / static_cast<double>(gh);
              double xx = sw + pw * bw + (ix + 0.5) * bw / static_cast<double>(gw);
              int64_t pos[4] = {0, 0, 0, 0};
              double w[4] = {0, 0, 0, 0};
              if (!(y < -1.0 || y > height || xx < -1.0 || xx > width)) {
                y = std::max(y, 0.0), xx = std::max(xx, 0.0);
                int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(xx), y1 = y0 + 1, x1 = x0 + 1;
                if (y0 >= height - 1) y1 = y0 = height - 1, y = static_cast<double>(y0);
                if (x0 >= width - 1) x1 = x0 = width - 1, xx = static_cast<double>(x0);
                const double ly = y - y0, lx = xx - x0, hy = 1.0 - ly, hx = 1.0 - lx;
                pos[0] = y0 * width + x0, pos[1] = y0 * width + x1, pos[2] = y1 * width + x0, pos[3] = y1 * width + x1;
                w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
              }
              double v[4];
              for (int k = 0; k < 4; ++k) v[k] = w[k] * plane[pos[k]];
              if (!a.max_mode) {
                value += v[0] + v[1] + v[2] + v[3];
                continue;
              }
              double m = v[0];
              for (int k = 1; k < 4; ++k) m = v[k] > m ? v[k] : m;
              value = first || m > value ? m : value;
              first = false;
            }
          }
          out.push_back(static_cast<float>(a.max_mode ? value : value / count));
        }
      }
    }
  }
  return out;
}

absl::StatusOr<NDArray> RoiAlign(const RoiAlignCase& a, NDArray x, NDArray rois, NDArray batch) {
  absl::StatusOr<std::vector<NDArray>> out = RunKernel(kRoiAlign, a.ToAttrs(), {x, rois, batch});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(RoiAlignTest, HandComputed) {
  const NDArray x = TensorOf<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const NDArray batch = I64({0});
  // One sample at the centre of the roi [0, 0, 1, 1]: (0.5, 0.5), the mean of the four.
  RoiAlignCase a{.sample_ratio = 1};
  EXPECT_EQ(Values(*RoiAlign(a, x, TensorOf<float>({1, 4}, {0, 0, 1, 1}), batch)), (std::vector<double>{2.5}));
  // Aligned shifts by half a pixel: the sample lands on pixel (0, 0).
  a.aligned = true;
  EXPECT_EQ(Values(*RoiAlign(a, x, TensorOf<float>({1, 4}, {0, 0, 1, 1}), batch)), (std::vector<double>{1}));
  // Max mode takes the largest weighted corner, 0.25 * 4, not the interpolated 2.5.
  a = RoiAlignCase{.sample_ratio = 1, .max_mode = true};
  EXPECT_EQ(Values(*RoiAlign(a, x, TensorOf<float>({1, 4}, {0, 0, 1, 1}), batch)), (std::vector<double>{1}));
  // A roi far off the image samples zeros; unaligned, a roi of no extent is 1 x 1.
  a = RoiAlignCase{.sample_ratio = 2};
  EXPECT_EQ(Values(*RoiAlign(a, x, TensorOf<float>({1, 4}, {9, 9, 12, 12}), batch)), (std::vector<double>{0}));
  EXPECT_EQ(Values(*RoiAlign(a, x, TensorOf<float>({1, 4}, {1, 1, 1, 1}), batch)), (std::vector<double>{4}));
  // 2 x 2 bins over the image, spatial_scale 0.5 on a roi given at twice the size.
  a = RoiAlignCase{.out_h = 2, .out_w = 2, .sample_ratio = 1, .spatial_scale = 0.5};
  EXPECT_EQ(Values(*RoiAlign(a, x, TensorOf<float>({1, 4}, {0, 0, 2, 2}), batch)),
            (std::vector<double>{1.75, 2.25, 2.75, 3.25}));
  // The batch index picks the image, i32 indices too.
  const NDArray two = TensorOf<float>({2, 1, 1, 1}, {5, 7});
  a = RoiAlignCase{.sample_ratio = 1};
  EXPECT_EQ(Values(*RoiAlign(a, two, TensorOf<float>({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}),
                             TensorOf<int32_t>({2}, {1, 0}))),
            (std::vector<double>{7, 5}));
}

TEST(RoiAlignTest, RandomAgainstReference) {
  std::mt19937 rng(29);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t images = RandomInt(rng, 1, 2), channels = RandomInt(rng, 0, 3);
    const int64_t height = RandomInt(rng, 1, 6), width = RandomInt(rng, 1, 6), count = RandomInt(rng, 0, 4);
    RoiAlignCase a{.out_h = RandomInt(rng, 1, 4),
                   .out_w = RandomInt(rng, 1, 4),
                   .sample_ratio = RandomInt(rng, -1, 3),
                   .spatial_scale = RandomInt(rng, 0, 3) == 0 ? 0.5 : 1.0,
                   .max_mode = RandomInt(rng, 0, 1) == 1,
                   .aligned = RandomInt(rng, 0, 1) == 1};
    std::mt19937 values(static_cast<unsigned>(iter));
    const NDArray x = RandomTensor({images, channels, height, width}, DType::kF32, values);
    // Corners within and past the image, in either order (malformed rois).
    std::vector<float> rois(static_cast<size_t>(count * 4));
    for (float& v : rois) v = std::uniform_real_distribution<float>(-2.0f, 8.0f)(rng);
    std::vector<int64_t> batch(static_cast<size_t>(count));
    for (int64_t& b : batch) b = RandomInt(rng, 0, images - 1);
    SCOPED_TRACE(::testing::Message() << "iteration " << iter);
    absl::StatusOr<NDArray> got = RoiAlign(a, x, TensorOf<float>({count, 4}, rois), I64(batch));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(std::vector<int64_t>((*got)->shape().begin(), (*got)->shape().end()),
              (std::vector<int64_t>{count, channels, a.out_h, a.out_w}));
    const std::vector<float> data(x->data_as<float>(), x->data_as<float>() + x->num_elements());
    ExpectClose(*got, ReferenceRoiAlign(a, data, channels, height, width, rois, batch), 1e-7, 1e-6);
  }
}

TEST(RoiAlignTest, Errors) {
  const NDArray x = Empty({1, 2, 4, 4}), rois = TensorOf<float>({1, 4}, {0, 0, 1, 1}), batch = I64({0});
  const RoiAlignCase a;
  ExpectInvalid(RoiAlign(a, x, rois, I64({1})), "vision.roi_align: batch index 1 of roi 0 out of range [0, 1)");
  ExpectInvalid(RoiAlign(a, x, rois, I64({-1})), "batch index -1 of roi 0 out of range");
  ExpectInvalid(RoiAlign(a, x, TensorOf<float>({1, 4}, {0, NAN, 1, 1}), batch), "roi 0 [0, nan, 1, 1] is not finite");
  ExpectInvalid(RoiAlign(a, x, TensorOf<float>({1, 4}, {0, 0, 1e30f, 1}), batch), "at most 1048576 samples");
  ExpectInvalid(RoiAlign(a, x, TensorOf<float>({1, 3}, {0, 0, 1}), batch), "must be [rois, 4] and [rois]");
  ExpectInvalid(RoiAlign(a, x, rois, I64({0, 0})), "must be [rois, 4] and [rois]");
  ExpectInvalid(RoiAlign(a, Empty({1, 2, 4}), rois, batch), "data must have rank 4");
  ExpectInvalid(RoiAlign(a, Empty({1, 2, 0, 4}), rois, batch), "cannot sample rois from the empty images");
  ExpectInvalid(RoiAlign(a, x, rois, F32({0})), "batch_indices");
  ExpectInvalid(RoiAlign(a, Empty({1, 2, 4, 4}, DType::kF64), rois, batch), "unsupported dtype f64");
  ExpectInvalid(RunKernel(kRoiAlign, {{"pooled_size", std::vector<int64_t>{0, 1}}}, {x, rois, batch}),
                "attribute 'pooled_size' must be [height, width]");
  ExpectInvalid(RunKernel(kRoiAlign, {{"pooled_size", std::vector<int64_t>{1, 1}}, {"mode", std::string("sum")}},
                          {x, rois, batch}),
                "unsupported mode 'sum'");
  ExpectInvalid(RunKernel(kRoiAlign, {{"pooled_size", std::vector<int64_t>{1, 1}}, {"layout", std::string("NHWC")}},
                          {x, rois, batch}),
                "layout");
  ExpectInvalid(RunKernel(kRoiAlign, {{"pooled_size", std::vector<int64_t>{1, 1}}, {"ratio", int64_t{2}}},
                          {x, rois, batch}),
                "ratio");
  ExpectInvalid(CallWithOutputs(kRoiAlign, a.ToAttrs(), {x, rois, batch}, {Empty({1, 2, 2, 1})}),
                "output 0 has shape [1, 2, 2, 1]");
  // No rois, or no channels, need no pixels; batch indices are checked all the same.
  EXPECT_EQ((*RoiAlign(a, Empty({0, 2, 0, 0}), Empty({0, 4}), I64({})))->num_elements(), 0);
  EXPECT_EQ((*RoiAlign(a, Empty({1, 0, 0, 4}), rois, batch))->num_elements(), 0);
  ExpectInvalid(RoiAlign(a, Empty({1, 0, 4, 4}), rois, I64({5})), "batch index 5 of roi 0 out of range");
}

}  // namespace
}  // namespace dynvm::kernels::testing
