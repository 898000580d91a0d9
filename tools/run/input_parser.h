// Values written on a command line — the `--input=` and `--expected_output=` specs of
// vm_run, after IREE's iree-run-module — and their binding to a function's parameters.
//
// A value spec is one of:
//   @x.npy                 a tensor read from a .npy file
//   2x3xf32=1,2,3,4,5,6    an inline tensor: dims separated by 'x', a dtype short name
//                          (f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool string),
//                          '=', the elements in C order separated by commas or spaces
//                          ('[' and ']' are ignored; a string element is its text as
//                          written, so it holds none of those)
//   f32=3.5                a 0-d tensor;  0x3xf32= an empty one
//   5  1.5  true           a scalar, for int, float and bool parameters
// An input may name its parameter: NAME=<value spec>.
//
//   absl::StatusOr<std::vector<Value>> args = BindInputs(
//       function, {"y=@y.npy", "2x3xf32=1,2,3,4,5,6"}, allocator);
#ifndef DYNVM_TOOLS_RUN_INPUT_PARSER_H_
#define DYNVM_TOOLS_RUN_INPUT_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/value.h"
#include "vm/executable.h"

namespace dynvm::tools {

// Parses an inline tensor such as "2x3xf32=1,2,3,4,5,6" into a new tensor from
// `allocator`. Integers must fit the dtype; floats round to nearest (f16 and bf16 to
// nearest even); bools are true/false/True/False/1/0; nan, inf and -inf are floats.
// InvalidArgument says what was wrong: a bad dim or dtype, a bad element (with its
// index), or a count of elements that does not match the shape.
absl::StatusOr<NDArray> ParseInlineTensor(std::string_view text,
                                          const std::shared_ptr<Allocator>& allocator);

// Parses one value spec (without a NAME= prefix; see the top of this file). A plain
// scalar is read according to `kind`: a kFloat parameter reads "2" as the float 2.0;
// for other kinds the text decides (an int, else a float, else true/false), and the VM's
// argument check reports a kind that does not fit. File errors keep their code and name
// the file.
absl::StatusOr<Value> ParseValue(std::string_view text, vm::ValueSpec::Kind kind,
                                 const std::shared_ptr<Allocator>& allocator);

// Binds `inputs` (value specs, each optionally NAME=-prefixed) to the parameters of
// `function`, as Python binds a call: the i-th input without a name is parameter i;
// named inputs may come anywhere. A prefix before the first '=' is a name when a
// parameter has that name; otherwise it must be an inline tensor's type. Every
// parameter must be given exactly once: an unknown name, a parameter given twice, too
// many inputs, or missing ones are InvalidArgument naming them. Errors parsing a value
// are prefixed with the input they belong to ("input 'y' (argument 1 of 'main'): ...").
absl::StatusOr<std::vector<Value>> BindInputs(const vm::Function& function,
                                              absl::Span<const std::string> inputs,
                                              const std::shared_ptr<Allocator>& allocator);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_RUN_INPUT_PARSER_H_
