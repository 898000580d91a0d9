// The public surface of vm/: load-independent pieces an embedder uses to run programs.
//
//   std::shared_ptr<const vm::Executable> exe = ...;   // serializer::LoadExecutable
//   vm::VirtualMachine machine(exe);
//   absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
#ifndef DYNVM_VM_API_H_
#define DYNVM_VM_API_H_

#include "vm/bytecode.h"         // IWYU pragma: export
#include "vm/executable.h"       // IWYU pragma: export
#include "vm/profiler.h"         // IWYU pragma: export
#include "vm/verifier.h"         // IWYU pragma: export
#include "vm/virtual_machine.h"  // IWYU pragma: export

#endif  // DYNVM_VM_API_H_
