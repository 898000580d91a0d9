// The backward liveness dataflow over a FunctionCode's basic blocks
// (compiler/codegen/liveness.h).
#include "compiler/codegen/liveness.h"

#include <algorithm>

namespace dynvm::compiler {
namespace {

// live := uses ∪ (live − defs), the step backward over `inst`.
void StepBackward(const vm::Instruction& inst, RegisterSet& live) {
  for (uint32_t r : DefinedRegisters(inst)) live.erase(r);
  for (uint32_t r : UsedRegisters(inst)) live.insert(r);
}

}  // namespace

Liveness::Liveness(const FunctionCode& f) : f_(f) {
  const size_t n = f.code.size();
  std::vector<bool> leader(n + 1, false);
  leader[0] = true;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<size_t> next = Successors(f, i);
    if (next.size() != 1 || next[0] != i + 1) {
      leader[i + 1] = true;
      for (size_t t : next) leader[t] = true;
    }
  }
  block_of_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (leader[i]) starts_.push_back(i);
    block_of_[i] = starts_.size() - 1;
  }
  starts_.push_back(n);
  const size_t blocks = starts_.size() - 1;
  live_in_.assign(blocks, RegisterSet(f.num_registers));
  live_out_.assign(blocks, RegisterSet(f.num_registers));
  // Backward over the blocks until nothing changes: once when every jump goes forward,
  // as in the code the generator emits; loops take more rounds.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = blocks; b-- > 0;) {
      RegisterSet out(f.num_registers);
      for (size_t s : Successors(f, starts_[b + 1] - 1)) {
        if (s < n) out.InsertAll(live_in_[block_of_[s]]);
      }
      live_out_[b] = out;
      for (size_t i = starts_[b + 1]; i-- > starts_[b];) StepBackward(f.code[i], out);
      if (!(out == live_in_[b])) {
        live_in_[b] = std::move(out);
        changed = true;
      }
    }
  }
}

void Liveness::ForEachInstruction(
    const std::function<void(size_t, const RegisterSet&)>& visit) const {
  for (size_t b = 0; b + 1 < starts_.size(); ++b) {
    RegisterSet live = live_out_[b];
    for (size_t i = starts_[b + 1]; i-- > starts_[b];) {
      visit(i, live);
      StepBackward(f_.code[i], live);
    }
  }
}

void Liveness::ForEachInstructionRemoving(
    const std::function<bool(size_t, const RegisterSet&)>& remove) const {
  for (size_t b = 0; b + 1 < starts_.size(); ++b) {
    RegisterSet live = live_out_[b];
    for (size_t i = starts_[b + 1]; i-- > starts_[b];) {
      if (!remove(i, live)) StepBackward(f_.code[i], live);
    }
  }
}

const RegisterSet& Liveness::LiveInAtBlockStart(size_t at) const { return live_in_[block_of_[at]]; }

}  // namespace dynvm::compiler
