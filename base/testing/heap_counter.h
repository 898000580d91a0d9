// Counts the process's heap allocations, to show that a loop makes none (benchmarks
// report them; tests assert them), and the bytes they hold, to show what a piece of code
// needs at its peak.
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
// Bytes from the global operator new not yet deleted (as malloc_usable_size counts
// them), and the most there were since the last ResetHeapPeak(): how much memory a
// piece of code needed at once.
int64_t HeapBytesLive();
int64_t HeapBytesPeak();
void ResetHeapPeak();

}  // namespace dynvm::testing

#endif  // DYNVM_BASE_TESTING_HEAP_COUNTER_H_
