/* Calls made from C, as C callers make them, for tests/capi/c_api_test.cc: C lets any int
 * stand where an enum is declared, which C++ cannot express without undefined
 * behaviour. */
#include "capi/c_api.h"

DynvmStatus CreateAllocatorOfKind(int kind, DynvmAllocator** out) {
  return dynvm_allocator_create(kind, 0, out);
}

const char* StatusNameOf(int code) { return dynvm_status_name(code); }
