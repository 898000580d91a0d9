// Text of the values a function returns, for vm_run and other tools that show results.
//
// Tensors print as numpy's repr prints an array's data (commas between elements,
// elements aligned, rows wrapped at 75 columns, arrays of more than 1000 elements
// summarized with "..." keeping 3 items at each end of every axis, floats with the
// fewest digits that read back to the same value in the tensor's dtype, at most 8 after
// the point, in scientific notation when magnitudes call for it), after a line with the
// dtype and shape:
//
//   tensor<f32>[2, 3]
//   [[1. , 2.5, 3. ],
//    [4. , 5. , 6. ]]
//
// Tuples print as `tuple(...)` and other ADTs as `adt<tag N>(...)`, on one line when
// everything fits, else one field per line indented by two spaces. Scalars print as
// `5`, `1.5`, `true`; strings quoted (`"text"`), shapes as `shape[2, 3]`, closures as
// `closure<@name>`.
#ifndef DYNVM_TOOLS_RUN_VALUE_PRINTER_H_
#define DYNVM_TOOLS_RUN_VALUE_PRINTER_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "objects/ndarray.h"
#include "objects/value.h"
#include "vm/executable.h"

namespace dynvm::tools {

struct PrintOptions {
  // Tensors of more elements than this are summarized (numpy's threshold).
  int64_t threshold = 1000;
  // Items kept at each end of a summarized axis (numpy's edgeitems).
  int64_t edge_items = 3;
  // Rows of elements wrap at this many columns (numpy's linewidth).
  int line_width = 75;
  // The functions closures index, to print their names; when empty, closures print as
  // `closure<#index>`. Not owned.
  absl::Span<const vm::Function> functions;
};

// "tensor<f32>[2, 3]".
std::string TensorTypeString(const NDArrayObj& array);
// The data of `array` as numpy's repr prints it, without "array(" and the dtype: "[]"
// for an empty tensor, the lone element for a 0-d one.
std::string FormatTensorData(const NDArrayObj& array, const PrintOptions& options = {});
// Element `index` (flat, C order) of `array` alone, with the fewest digits that read
// back to it: "0.1", "nan", "-3", "True".
std::string FormatElement(const NDArrayObj& array, int64_t index);
// `value` as Python's repr writes a float: "2.0", "0.1", "1e-05", "inf".
std::string FormatFloat(double value);
// Any value, as described at the top of this file. Multi-line for tensors and for
// ADTs that do not fit on one line; no trailing newline.
std::string FormatValue(const Value& value, const PrintOptions& options = {});

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_RUN_VALUE_PRINTER_H_
