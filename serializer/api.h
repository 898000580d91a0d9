// The public surface of serializer/: executable files and .npy tensors.
#ifndef DYNVM_SERIALIZER_API_H_
#define DYNVM_SERIALIZER_API_H_

#include "serializer/executable_file.h"  // IWYU pragma: export
#include "serializer/npy.h"              // IWYU pragma: export

#endif  // DYNVM_SERIALIZER_API_H_
