// Tests of sequence_positions and sequence_rows (kernels/nn/packed_sequences.cc): each
// row's position in its packed sequence and each sequence's row r, i32 and i64
// offsets, empty sequences, and the offsets' errors.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

std::vector<int64_t> Positions(const NDArray& offsets, int64_t tokens) {
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel("sequence_positions", {}, {offsets, Empty({tokens, 3})}, {DType::kI64});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0]->dtype(), DType::kI64);
  const int64_t* p = (*out)[0]->data_as<int64_t>();
  return std::vector<int64_t>(p, p + (*out)[0]->num_elements());
}

TEST(SequencePositionsTest, RestartAtEachOffset) {
  EXPECT_EQ(Positions(TensorOf<int64_t>({4}, {0, 3, 3, 5}), 5), (std::vector<int64_t>{0, 1, 2, 0, 1}));
  EXPECT_EQ(Positions(TensorOf<int32_t>({3}, {0, 1, 4}), 4), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(Positions(TensorOf<int64_t>({1}, {0}), 0), std::vector<int64_t>{});
}

TEST(SequencePositionsTest, Errors) {
  ExpectInvalid(RunKernel("sequence_positions", {}, {TensorOf<int64_t>({3}, {0, 2, 4}), Empty({5})}, {DType::kI64}),
                "sequence_positions: the last offset is 4, expected 5 (the tokens)");
  ExpectInvalid(RunKernel("sequence_positions", {}, {TensorOf<int64_t>({3}, {1, 2, 5}), Empty({5})}, {DType::kI64}),
                "sequence_positions: offsets[0] is 1, expected 0");
  ExpectInvalid(RunKernel("sequence_positions", {}, {TensorOf<int64_t>({3}, {0, 4, 2}), Empty({5})}, {DType::kI64}),
                "sequence_positions: offsets[2] is 2 after 4");
  ExpectInvalid(RunKernel("sequence_positions", {}, {Empty({3}), Empty({5})}, {DType::kI64}),
                "unsupported dtype f32 for sequence_positions offsets");
  ExpectInvalid(RunKernel("sequence_positions", {}, {TensorOf<int64_t>({0}, {}), Empty({5})}, {DType::kI64}),
                "sequence_positions: offsets must have rank 1 [sequences + 1], got shape [0]");
  ExpectInvalid(RunKernel("sequence_positions", {}, {TensorOf<int64_t>({1}, {0}), Empty({})}, {DType::kI64}),
                "sequence_positions: tokens must have rank 1 or more [tokens, ...], got a scalar");
  ExpectInvalid(RunKernel("sequence_positions", {}, {TensorOf<int32_t>({2}, {0, 2}), Empty({2})}),
                "sequence_positions: output 0 has dtype i32, expected i64");
}

TEST(SequenceRowsTest, EachSequencesRow) {
  const NDArray offsets = TensorOf<int32_t>({4}, {0, 3, 4, 9});
  for (int64_t row : {0, 1}) {
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("sequence_rows", {{"row", row}}, {offsets}, {DType::kI64});
    if (row == 1) {  // sequence 1 has one row
      ExpectInvalid(out, "sequence_rows: sequence 1 has 1 rows, but row 1 of each is read");
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t* r = (*out)[0]->data_as<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(r, r + 3), (std::vector<int64_t>{0, 3, 4}));
  }
  ExpectInvalid(RunKernel("sequence_rows", {}, {TensorOf<int64_t>({3}, {0, 0, 2})}, {DType::kI64}),
                "sequence_rows: sequence 0 has 0 rows, but row 0 of each is read");
  ExpectInvalid(RunKernel("sequence_rows", {{"row", int64_t{-1}}}, {offsets}, {DType::kI64}),
                "attribute 'row' is -1: expected 0 or more");
  ExpectInvalid(RunKernel("sequence_rows", {}, {TensorOf<int64_t>({3}, {0, 5, 2})}, {DType::kI64}),
                "sequence_rows: offsets[1] is 5 after 0: expected offsets rising to 2 (the tokens)");
}

}  // namespace
}  // namespace dynvm::kernels::testing
