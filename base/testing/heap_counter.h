// Counts the process's heap allocations, to show that a loop makes none (benchmarks
// report them; tests assert them).
//
// Linking heap_counter.cc replaces the global operator new/delete (in their own
// translation unit, so callers see ordinary calls) with ones that count.
//
//   const int64_t before = HeapAllocations();
//   ...;
//   const int64_t made = HeapAllocations() - before;
#ifndef DYNVM_BASE_TESTING_HEAP_COUNTER_H_
#define DYNVM_BASE_TESTING_HEAP_COUNTER_H_

#include <cstdint>

namespace dynvm::testing {

// Calls of the global operator new (any form) so far.
int64_t HeapAllocations();

}  // namespace dynvm::testing

#endif  // DYNVM_BASE_TESTING_HEAP_COUNTER_H_
