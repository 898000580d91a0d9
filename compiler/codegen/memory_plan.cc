// Memory planning (compiler/codegen/memory_plan.h): interference of operator
// outputs by liveness, and their assignment to shared storages.
#include "compiler/codegen/memory_plan.h"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/codegen/liveness.h"

namespace dynvm::compiler {
namespace {

using vm::Instruction;
using vm::Opcode;

constexpr int64_t kAlignment = 64;  // what alloc_storage guarantees, and kernels assume

int64_t AlignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// An operator output in a storage of its own.
struct Candidate {
  size_t at;          // its alloc_tensor / alloc_tensor_reg
  size_t storage_at;  // its alloc_storage
  uint32_t tensor;
  uint32_t bytes_register;
  int64_t static_bytes;  // -1 for a symbolic size
};

// Where each register is written and read.
struct DefUse {
  explicit DefUse(const FunctionCode& f)
      : defs(f.num_registers, 0), def_at(f.num_registers, 0), uses(f.num_registers) {
    for (size_t i = 0; i < f.code.size(); ++i) {
      for (uint32_t r : DefinedRegisters(f.code[i])) {
        ++defs[r];
        def_at[r] = i;
      }
      for (uint32_t r : UsedRegisters(f.code[i])) uses[r].push_back(i);
    }
  }
  // The one instruction writing `r` if it is `op`, else null.
  const Instruction* SingleDef(const FunctionCode& f, uint32_t r, Opcode op) const {
    return defs[r] == 1 && f.code[def_at[r]].op == op ? &f.code[def_at[r]] : nullptr;
  }

  std::vector<int> defs;
  std::vector<size_t> def_at;
  std::vector<std::vector<size_t>> uses;
};

bool ReadOnlyByKernels(const FunctionCode& f, const std::vector<size_t>& uses) {
  return std::all_of(uses.begin(), uses.end(), [&](size_t at) {
    const Opcode op = f.code[at].op;
    return op == Opcode::kInvokePacked || op == Opcode::kInvokeShapeFn || op == Opcode::kDim ||
           op == Opcode::kShapeOf;
  });
}

std::vector<Candidate> FindCandidates(const FunctionCode& f, const DefUse& du) {
  std::vector<Candidate> found;
  for (size_t at = 0; at < f.code.size(); ++at) {
    const Instruction& inst = f.code[at];
    if (inst.op != Opcode::kAllocTensor && inst.op != Opcode::kAllocTensorReg) continue;
    const auto tensor = static_cast<uint32_t>(inst.operands[0]);
    const auto storage = static_cast<uint32_t>(inst.operands[1]);
    const Instruction* alloc = du.SingleDef(f, storage, Opcode::kAllocStorage);
    if (du.defs[tensor] != 1 || alloc == nullptr || du.uses[storage].size() != 1) continue;
    if (inst.op == Opcode::kAllocTensor ? inst.operands[2] != 0 : [&] {
          const Instruction* offset =
              du.SingleDef(f, static_cast<uint32_t>(inst.operands[2]), Opcode::kLoadConsti);
          return offset == nullptr || offset->operands[1] != 0;
        }()) {
      continue;
    }
    if (!ReadOnlyByKernels(f, du.uses[tensor])) continue;
    const auto bytes = static_cast<uint32_t>(alloc->operands[1]);
    const Instruction* constant = du.SingleDef(f, bytes, Opcode::kLoadConsti);
    const bool is_static = inst.op == Opcode::kAllocTensor && constant != nullptr;
    if (!is_static && du.defs[bytes] > 1) continue;  // sharing needs one value per register
    found.push_back({at, du.def_at[storage], tensor, bytes, is_static ? constant->operands[1] : -1});
  }
  return found;
}

// Immediate dominators of the blocks of code whose jumps all go forward (what the
// generator emits): block order is then a topological order, and one pass suffices.
class Dominators {
 public:
  explicit Dominators(const FunctionCode& f, const Liveness& live) : live_(live) {
    const size_t blocks = live.starts().size() - 1;
    idom_.assign(blocks, kUnreached);
    if (blocks == 0) return;
    idom_[0] = 0;
    for (size_t b = 0; b < blocks; ++b) {
      if (idom_[b] == kUnreached) continue;
      for (size_t s : Successors(f, live.starts()[b + 1] - 1)) {
        if (s >= f.code.size()) continue;
        const size_t t = live.BlockOf(s);
        idom_[t] = idom_[t] == kUnreached ? b : Intersect(idom_[t], b);
      }
    }
  }
  static bool Applies(const FunctionCode& f) {
    for (size_t i = 0; i < f.code.size(); ++i) {
      for (size_t s : Successors(f, i)) {
        if (s <= i) return false;
      }
    }
    return true;
  }
  bool Reached(size_t at) const { return idom_[live_.BlockOf(at)] != kUnreached; }
  // Whether every path from the entry to instruction `b` passes instruction `a`.
  bool Dominates(size_t a, size_t b) const {
    const size_t block_a = live_.BlockOf(a);
    size_t block_b = live_.BlockOf(b);
    if (block_a == block_b) return a <= b;
    while (block_b > block_a) block_b = idom_[block_b];
    return block_b == block_a;
  }

 private:
  static constexpr size_t kUnreached = SIZE_MAX;
  size_t Intersect(size_t a, size_t b) const {
    while (a != b) {
      if (a > b) {
        a = idom_[a];
      } else {
        b = idom_[b];
      }
    }
    return a;
  }
  const Liveness& live_;
  std::vector<size_t> idom_;
};

}  // namespace

MemoryPlanStats PlanMemory(FunctionCode& f) {
  MemoryPlanStats stats;
  const DefUse du(f);
  const std::vector<Candidate> candidates = FindCandidates(f, du);
  if (candidates.empty()) return stats;

  // Which planned tensors are alive together: one is live where the other is allocated.
  const Liveness live(f);
  absl::flat_hash_map<uint32_t, size_t> candidate_of;  // tensor register -> index
  absl::flat_hash_map<size_t, size_t> candidate_at;    // alloc instruction -> index
  for (size_t c = 0; c < candidates.size(); ++c) {
    candidate_of[candidates[c].tensor] = c;
    candidate_at[candidates[c].at] = c;
  }
  absl::flat_hash_set<std::pair<size_t, size_t>> together;
  live.ForEachInstruction([&](size_t at, const RegisterSet& live_out) {
    const auto it = candidate_at.find(at);
    if (it == candidate_at.end()) return;
    live_out.ForEach([&](uint32_t r) {
      const auto other = candidate_of.find(r);
      if (other == candidate_of.end() || other->second == it->second) return;
      together.insert({it->second, other->second});
      together.insert({other->second, it->second});
    });
  });

  std::vector<bool> keep(f.code.size(), true);
  std::vector<std::vector<Instruction>> before(f.code.size() + 1);

  // Static sizes: offsets in one arena.
  std::vector<size_t> statics;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (candidates[c].static_bytes >= 0) statics.push_back(c);
  }
  std::stable_sort(statics.begin(), statics.end(), [&](size_t a, size_t b) {
    return candidates[a].static_bytes > candidates[b].static_bytes;
  });
  std::vector<int64_t> offset(candidates.size(), -1);
  for (size_t c : statics) {
    const int64_t size = AlignUp(candidates[c].static_bytes);
    std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of tensors alive with c
    for (size_t other : statics) {
      if (offset[other] >= 0 && together.contains({c, other})) {
        taken.push_back({offset[other], offset[other] + AlignUp(candidates[other].static_bytes)});
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t at = 0;
    for (const auto& [begin, end] : taken) {
      if (at + size <= begin) break;
      at = std::max(at, end);
    }
    offset[c] = at;
    stats.arena_bytes = std::max(stats.arena_bytes, at + size);
    stats.static_bytes += candidates[c].static_bytes;
  }
  stats.static_tensors = static_cast<int64_t>(statics.size());
  if (!statics.empty()) {
    const uint32_t size = f.num_registers++, arena = f.num_registers++;
    before[0].push_back({Opcode::kLoadConsti, {size, stats.arena_bytes}, {}});
    before[0].push_back({Opcode::kAllocStorage, {arena, size}, {}});
    for (size_t c : statics) {
      f.code[candidates[c].at].operands[1] = arena;
      f.code[candidates[c].at].operands[2] = offset[c];
      keep[candidates[c].storage_at] = false;
    }
  }

  // Symbolic sizes: equal sizes share storages.
  if (Dominators::Applies(f)) {
    const Dominators dominators(f, live);
    struct Shared {
      uint32_t storage;
      size_t storage_at;
      std::vector<size_t> members;
    };
    absl::flat_hash_map<uint32_t, std::vector<Shared>> by_size;  // bytes register -> storages
    for (size_t c = 0; c < candidates.size(); ++c) {
      const Candidate& cand = candidates[c];
      if (cand.static_bytes >= 0 || !dominators.Reached(cand.at)) continue;
      ++stats.symbolic_tensors;
      std::vector<Shared>& storages = by_size[cand.bytes_register];
      const auto fits = [&](const Shared& s) {
        return dominators.Dominates(s.storage_at, cand.at) &&
               std::none_of(s.members.begin(), s.members.end(),
                            [&](size_t m) { return together.contains({c, m}); });
      };
      const auto it = std::find_if(storages.begin(), storages.end(), fits);
      if (it == storages.end()) {
        storages.push_back({static_cast<uint32_t>(f.code[cand.at].operands[1]), cand.storage_at, {c}});
        ++stats.symbolic_storages;
        continue;
      }
      f.code[cand.at].operands[1] = it->storage;
      keep[cand.storage_at] = false;
      it->members.push_back(c);
    }
  }
  Rewrite(f, keep, std::move(before));
  return stats;
}

}  // namespace dynvm::compiler
