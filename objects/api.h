// The public surface of objects/: everything an embedder needs to build inputs for the
// VM and read its outputs.
#ifndef DYNVM_OBJECTS_API_H_
#define DYNVM_OBJECTS_API_H_

#include "objects/adt.h"           // IWYU pragma: export
#include "objects/allocator.h"     // IWYU pragma: export
#include "objects/dtype.h"         // IWYU pragma: export
#include "objects/ndarray.h"       // IWYU pragma: export
#include "objects/object.h"        // IWYU pragma: export
#include "objects/shape_tuple.h"   // IWYU pragma: export
#include "objects/storage.h"       // IWYU pragma: export
#include "objects/string_object.h" // IWYU pragma: export
#include "objects/value.h"         // IWYU pragma: export

#endif  // DYNVM_OBJECTS_API_H_
