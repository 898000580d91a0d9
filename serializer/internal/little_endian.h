// Little-endian integers in byte buffers, whatever the host's order: the executable
// file's header (file_header.cc) and the zip structures of .npz archives (npz.cc).
#ifndef DYNVM_SERIALIZER_INTERNAL_LITTLE_ENDIAN_H_
#define DYNVM_SERIALIZER_INTERNAL_LITTLE_ENDIAN_H_

#include <cstddef>
#include <cstdint>

namespace dynvm::serializer::internal {

template <typename T>
void StoreLittleEndian(T value, uint8_t* out) {
  for (size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

// The T whose bytes start at `in`; the caller has checked sizeof(T) bytes are there.
template <typename T>
T LoadLittleEndian(const uint8_t* in) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return value;
}

}  // namespace dynvm::serializer::internal

#endif  // DYNVM_SERIALIZER_INTERNAL_LITTLE_ENDIAN_H_
