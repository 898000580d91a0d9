// Registration of the text kernel family (kernels/data_movement/text.cc), and the
// encoding of the lists of strings its kernels take as attributes.
//
// Kernel attributes hold no list of strings (kernels::AttrValue), so a list travels as
// one string attribute: each string as its length in bytes (decimal), ':', then its
// bytes. Any bytes may appear in the strings, ':' and NUL included.
//
//   EncodeStringList({"the", "", "a:b"})  // "3:the0:3:a:b"
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_TEXT_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_TEXT_H_

#include <string>

#include "absl/types/span.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds text.string_normalizer and text.tfidf_vectorizer.
absl::Status RegisterTextKernels(KernelRegistry& registry);

// `strings` as the value of a string-list attribute (see above); "" for no strings.
std::string EncodeStringList(absl::Span<const std::string> strings);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_TEXT_H_
