// The text of string elements, for the tools that print or compare what a function
// returned. Numeric elements are read through objects/element_codec.h.
//
//   std::string s = StringElementRepr(*t, 0);   // 'it\'s'
#ifndef DYNVM_TOOLS_RUN_ELEMENTS_H_
#define DYNVM_TOOLS_RUN_ELEMENTS_H_

#include <cstdint>
#include <string>

#include "objects/ndarray.h"

namespace dynvm::tools {

// Element `index` of a string `array` quoted as Python's repr quotes it, non-printable
// bytes escaped ('it\'s', 'a\n'); an element the storage does not hold (see
// objects/string_tensor.h) prints as <invalid string>.
std::string StringElementRepr(const NDArrayObj& array, int64_t index);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_RUN_ELEMENTS_H_
