// Which registers of a function hold a value some later instruction reads: the backward
// dataflow of every register allocator, over the basic blocks of a FunctionCode.
//
//   Liveness live(code);
//   live.ForEachInstruction([&](size_t at, const RegisterSet& live_out) { ... });
//
// A register is live after an instruction if some path from it reads the register
// before writing it. Parameters are written on entry.
#ifndef DYNVM_COMPILER_CODEGEN_LIVENESS_H_
#define DYNVM_COMPILER_CODEGEN_LIVENESS_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/codegen/function_code.h"

namespace dynvm::compiler {

class RegisterSet {
 public:
  explicit RegisterSet(uint32_t num_registers = 0) : words_((num_registers + 63) / 64) {}

  bool contains(uint32_t r) const { return (words_[r / 64] >> (r % 64)) & 1; }
  void insert(uint32_t r) { words_[r / 64] |= uint64_t{1} << (r % 64); }
  void erase(uint32_t r) { words_[r / 64] &= ~(uint64_t{1} << (r % 64)); }
  // Adds `other`'s registers; whether any was new.
  bool InsertAll(const RegisterSet& other) {
    bool changed = false;
    for (size_t i = 0; i < words_.size(); ++i) {
      const uint64_t merged = words_[i] | other.words_[i];
      changed |= merged != words_[i];
      words_[i] = merged;
    }
    return changed;
  }
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      for (uint64_t w = words_[i]; w != 0; w &= w - 1) {
        f(static_cast<uint32_t>(i * 64 + std::countr_zero(w)));
      }
    }
  }
  friend bool operator==(const RegisterSet&, const RegisterSet&) = default;

 private:
  std::vector<uint64_t> words_;
};

class Liveness {
 public:
  explicit Liveness(const FunctionCode& f);

  // Calls `visit(at, live_out)` for every instruction, each block's backward, with the
  // registers live after instruction `at`.
  void ForEachInstruction(const std::function<void(size_t, const RegisterSet&)>& visit) const;
  // The same walk, where `remove(at, live_out)` may drop the instruction: a dropped
  // instruction reads nothing, so what only it read is dead before it. Block boundaries
  // keep the liveness computed with every instruction.
  void ForEachInstructionRemoving(const std::function<bool(size_t, const RegisterSet&)>& remove) const;
  // The registers live before instruction `at`, which must begin a block (a jump
  // target, the first instruction, or one after a jump).
  const RegisterSet& LiveInAtBlockStart(size_t at) const;
  // Whether `at` begins a block.
  bool IsBlockStart(size_t at) const { return starts_[block_of_[at]] == at; }
  // The blocks in code order: [starts()[b], starts()[b + 1]).
  const std::vector<size_t>& starts() const { return starts_; }
  size_t BlockOf(size_t at) const { return block_of_[at]; }

 private:
  const FunctionCode& f_;
  std::vector<size_t> starts_;     // first instruction of each block, then code.size()
  std::vector<size_t> block_of_;   // per instruction
  std::vector<RegisterSet> live_in_, live_out_;  // per block
};

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_CODEGEN_LIVENESS_H_
