#include "tests/models/bert_mini.h"

#include <cstdlib>
#include <random>

#include "objects/ndarray.h"

namespace dynvm::bert_mini {

std::vector<Value> RandomInputs(int64_t batch, int64_t length, uint32_t seed,
                                const std::shared_ptr<Allocator>& allocator) {
  constexpr int64_t kVocab = 1000;  // bert_mini's word embeddings
  std::mt19937 rng(seed);
  std::vector<Value> inputs;
  for (const auto& [low, high] : {std::pair{0, kVocab - 1}, {1, 1}, {0, 1}}) {
    NDArray t = *NDArrayObj::Empty({batch, length}, DType::kI64, allocator);
    std::uniform_int_distribution<int64_t> value(low, high);
    for (int64_t i = 0; i < batch * length; ++i) t->data_as<int64_t>()[i] = value(rng);
    inputs.emplace_back(std::move(t));
  }
  return inputs;
}

std::string ExePath() {
  const char* env = std::getenv("DYNVM_BERT_MINI_EXE");
  return env != nullptr ? env : DYNVM_BERT_MINI_EXE;
}

}  // namespace dynvm::bert_mini
