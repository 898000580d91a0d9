// Tiny BERT (tests/models/bert/bert_mini.onnx) for the tests that run a real model's
// executable (sharing across threads, vm_serve): where the executable is, and random
// inputs — token ids, an attention mask of ones, token types 0/1, all i64[batch, length].
#ifndef DYNVM_TESTS_MODELS_BERT_MINI_H_
#define DYNVM_TESTS_MODELS_BERT_MINI_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "objects/allocator.h"
#include "objects/value.h"

namespace dynvm::bert_mini {

// input_ids, attention_mask, token_type_ids for `batch` sequences of `length` tokens,
// the same for the same `seed`.
std::vector<Value> RandomInputs(int64_t batch, int64_t length, uint32_t seed,
                                const std::shared_ptr<Allocator>& allocator);

// The tiny BERT executable: DYNVM_BERT_MINI_EXE in the environment if set (a build that
// cannot compile models, such as the ThreadSanitizer one, takes the Release build's),
// else the ctest fixture's.
std::string ExePath();

}  // namespace dynvm::bert_mini

#endif  // DYNVM_TESTS_MODELS_BERT_MINI_H_
