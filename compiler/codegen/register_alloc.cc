// Register allocation (compiler/codegen/register_alloc.h): interference of
// values by liveness, and the renumbering that packs the frame.
#include "compiler/codegen/register_alloc.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "compiler/codegen/liveness.h"

namespace dynvm::compiler {
namespace {

using vm::Instruction;
using vm::Opcode;

bool EndsFrameOrJumps(Opcode op) {
  return op == Opcode::kIf || op == Opcode::kGoto || op == Opcode::kRet || op == Opcode::kFatal ||
         op == Opcode::kTailInvoke;
}

// Whether the values `op` writes are objects worth releasing early. Constants stay
// alive in the executable, and shapes and integers hold no memory to speak of.
bool WritesObject(Opcode op) {
  switch (op) {
    case Opcode::kMove:
    case Opcode::kInvoke:
    case Opcode::kInvokeClosure:
    case Opcode::kAllocStorage:
    case Opcode::kAllocTensor:
    case Opcode::kAllocTensorReg:
    case Opcode::kAllocADT:
    case Opcode::kAllocClosure:
    case Opcode::kGetField:
    case Opcode::kReshapeTensor:
    case Opcode::kDeviceCopy: return true;
    default: return false;
  }
}

Instruction Kill(uint32_t r) { return {Opcode::kKillRegister, {r}, {}}; }

void AddOnce(std::vector<Instruction>& kills, uint32_t r) {
  for (const Instruction& k : kills) {
    if (k.operands[0] == r) return;
  }
  kills.push_back(Kill(r));
}

// A kill just before a write of the same register: the write releases the old value.
// (Not before a call: its result is written when the callee returns, and the old value
// would live through the call.)
void RemoveRedundantKills(FunctionCode& f) {
  std::vector<bool> keep(f.code.size(), true);
  for (size_t i = 0; i < f.code.size(); ++i) {
    if (f.code[i].op != Opcode::kKillRegister) continue;
    size_t next = i + 1;
    while (next < f.code.size() && f.code[next].op == Opcode::kKillRegister) ++next;
    if (next == f.code.size() || f.code[next].op == Opcode::kInvoke ||
        f.code[next].op == Opcode::kInvokeClosure) {
      continue;
    }
    const auto r = static_cast<uint32_t>(f.code[i].operands[0]);
    const std::vector<uint32_t> defs = DefinedRegisters(f.code[next]);
    const std::vector<uint32_t> uses = UsedRegisters(f.code[next]);
    keep[i] = std::find(defs.begin(), defs.end(), r) == defs.end() ||
              std::find(uses.begin(), uses.end(), r) != uses.end();
  }
  Rewrite(f, keep, {});
}

}  // namespace

void RemoveDeadCode(FunctionCode& f) {
  // A round removes whole dead chains within each block; another round is needed only
  // for chains that cross blocks.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> keep(f.code.size(), true);
    Liveness(f).ForEachInstructionRemoving([&](size_t at, const RegisterSet& live_out) {
      const Instruction& inst = f.code[at];
      if (!IsPure(inst.op)) return false;
      const std::vector<uint32_t> defs = DefinedRegisters(inst);
      if (std::any_of(defs.begin(), defs.end(), [&](uint32_t r) { return live_out.contains(r); })) {
        return false;
      }
      keep[at] = false;
      changed = true;
      return true;
    });
    if (changed) Rewrite(f, keep, {});
  }
}

void AllocateRegisters(FunctionCode& f) {
  const uint32_t n = f.num_registers;
  const Liveness live(f);

  // Interference, and where objects die.
  std::vector<std::vector<uint32_t>> adjacent(n);
  const auto interfere = [&](uint32_t a, uint32_t b) {
    if (a == b) return;
    adjacent[a].push_back(b);
    adjacent[b].push_back(a);
  };
  for (uint32_t a = 0; a < f.num_params; ++a) {
    for (uint32_t b = 0; b < a; ++b) interfere(a, b);
  }
  std::vector<bool> object(n, false);
  for (uint32_t p = 0; p < f.num_params; ++p) object[p] = true;  // tensors and ADTs, mostly
  for (const Instruction& inst : f.code) {
    if (!WritesObject(inst.op)) continue;
    for (uint32_t r : DefinedRegisters(inst)) object[r] = true;
  }
  std::vector<std::vector<Instruction>> kills(f.code.size() + 1);
  live.ForEachInstruction([&](size_t at, const RegisterSet& live_out) {
    const Instruction& inst = f.code[at];
    const std::vector<uint32_t> defs = DefinedRegisters(inst);
    const std::vector<uint32_t> uses = UsedRegisters(inst);
    for (uint32_t d : defs) {
      live_out.ForEach([&](uint32_t r) { interfere(d, r); });
      for (uint32_t u : uses) interfere(d, u);
      for (uint32_t d2 : defs) interfere(d, d2);
    }
    if (inst.op == Opcode::kIf) {
      for (size_t target : Successors(f, at)) {
        const RegisterSet& live_in = live.LiveInAtBlockStart(target);
        live_out.ForEach([&](uint32_t r) {
          if (object[r] && !live_in.contains(r)) AddOnce(kills[target], r);
        });
      }
    } else if (!EndsFrameOrJumps(inst.op)) {
      for (const std::vector<uint32_t>* regs : {&uses, &defs}) {
        for (uint32_t r : *regs) {
          if (object[r] && !live_out.contains(r)) AddOnce(kills[at + 1], r);
        }
      }
    }
  });

  // Greedy coloring in order of first write.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> color(n, kNone);
  for (uint32_t p = 0; p < f.num_params; ++p) color[p] = p;
  uint32_t num_colors = f.num_params;
  std::vector<bool> taken;
  const auto assign = [&](uint32_t r) {
    if (color[r] != kNone) return;
    taken.assign(num_colors + 1, false);
    for (uint32_t other : adjacent[r]) {
      if (color[other] != kNone) taken[color[other]] = true;
    }
    color[r] = static_cast<uint32_t>(std::find(taken.begin(), taken.end(), false) - taken.begin());
    num_colors = std::max(num_colors, color[r] + 1);
  };
  for (const Instruction& inst : f.code) {
    for (uint32_t r : DefinedRegisters(inst)) assign(r);
  }
  for (uint32_t r = 0; r < n; ++r) assign(r);  // never written: unused, or a parameter

  Rewrite(f, {}, std::move(kills));
  for (Instruction& inst : f.code) {
    ForEachRegister(inst, [&](int64_t& r) { r = color[r]; });
  }
  f.num_registers = num_colors;
  RemoveRedundantKills(f);
}

}  // namespace dynvm::compiler
