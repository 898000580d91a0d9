// Reading and writing numpy's `.npy` format (versions 1.0, 2.0 and 3.0), the tensor
// interchange of the CLIs and of test goldens. See docs/file-format.md.
//
// C order only: a Fortran-order file (of rank 2 or more) is InvalidArgument, as is a
// dtype we do not support (complex, objects, structured arrays). Big-endian data is
// byte-swapped on read; bool bytes become 0/1. numpy's fixed-width strings ('S' bytes,
// 'U' UTF-32) read as string tensors, trailing NULs dropped as numpy drops them; a
// string tensor is written as '<U' when all its elements are UTF-8, else as '|S'.
// Written files are version 1.0 (2.0 if the header needs it) and load in numpy.
//
//   DYNVM_ASSIGN_OR_RETURN(NDArray x, serializer::ReadNpyFile("x.npy", allocator));
//   DYNVM_RETURN_IF_ERROR(serializer::WriteNpyFile("y.npy", y));
#ifndef DYNVM_SERIALIZER_NPY_H_
#define DYNVM_SERIALIZER_NPY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"

namespace dynvm::serializer {

// Parses `.npy` bytes into a new tensor from `allocator`. Errors say what was wrong
// (bad magic, truncated header or data, unsupported dtype, Fortran order, ...).
absl::StatusOr<NDArray> ParseNpy(absl::Span<const uint8_t> bytes,
                                 const std::shared_ptr<Allocator>& allocator);
// Reads the file at `path`; errors name the file.
absl::StatusOr<NDArray> ReadNpyFile(const std::string& path,
                                    const std::shared_ptr<Allocator>& allocator);

// The `.npy` bytes of `array`, byte for byte what numpy >= 1.23 writes for the same
// array. bf16 has no numpy dtype: it is written as '<f4', which holds every bfloat16
// value exactly, so numpy sees the true values and reading the file back gives f32.
// Fails only for string tensors: an element its storage does not hold
// (InvalidArgument), or padded data past 2^20 per element or 1 GiB in all
// (ResourceExhausted).
absl::StatusOr<std::string> SerializeNpy(const NDArray& array);
// Writes SerializeNpy(array) to `path`; errors name the file.
absl::Status WriteNpyFile(const std::string& path, const NDArray& array);

}  // namespace dynvm::serializer

#endif  // DYNVM_SERIALIZER_NPY_H_
