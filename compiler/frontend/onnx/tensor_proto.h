// ONNX tensors to ours: element types, TensorProto messages (initializers, Constant
// values) and the serialized TensorProto files of ONNX's test data sets.
//
// This is the border where untrusted ONNX bytes become NDArrays, so everything is
// checked here: dims, the element count, that exactly one data source is present and
// holds exactly the elements the shape needs, and that narrow integers stored in
// int32_data fit their type. External data (a weights file beside the model) is read
// only from under the model's directory.
//
//   DYNVM_ASSIGN_OR_RETURN(DType t, DTypeFromOnnx(onnx::TensorProto::FLOAT));  // kF32
//   DYNVM_ASSIGN_OR_RETURN(NDArray w, TensorFromProto(graph.initializer(0), model_dir));
//   DYNVM_ASSIGN_OR_RETURN(NDArray x, ReadTensorProtoFile("test_data_set_0/input_0.pb"));
#ifndef DYNVM_COMPILER_FRONTEND_ONNX_TENSOR_PROTO_H_
#define DYNVM_COMPILER_FRONTEND_ONNX_TENSOR_PROTO_H_

#include <cstdint>
#include <optional>
#include <string>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"

namespace dynvm::compiler::onnx_frontend {

// The largest serialized TensorProto file ReadTensorProtoFile reads: protobuf cannot
// parse a message of 2 GiB or more.
inline constexpr int64_t kMaxTensorProtoFileBytes = (int64_t{1} << 31) - 1;

// Our dtype for ONNX's TensorProto.DataType `elem_type`: FLOAT f32, DOUBLE f64, FLOAT16
// f16, BFLOAT16 bf16, INT8 i8, INT16 i16, INT32 i32, INT64 i64, UINT8 u8, UINT16 u16,
// UINT32 u32, UINT64 u64, BOOL bool, STRING string.
// Any other type ONNX defines (COMPLEX64/128, ...) is Unimplemented,
// and UNDEFINED or a number ONNX does not define InvalidArgument, naming it and listing
// the supported types.
absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type);

// A new tensor (from a naive allocator) holding the value of `t`. Its data comes from
// exactly one of:
//   - raw_data: the elements' little-endian bytes (bool bytes are normalised to 0/1);
//   - the typed field ONNX prescribes for the type: float_data (FLOAT), double_data
//     (DOUBLE), int64_data (INT64), uint64_data (UINT64, and UINT32 checked to fit),
//     int32_data (INT32, and INT8, INT16, UINT8, UINT16, BOOL, and the bit patterns of
//     FLOAT16 and BFLOAT16, each value checked to fit);
//   - external data (data_location EXTERNAL): the bytes at `offset` (default 0) of the
//     file `location`, a relative path resolved against `base_dir`, `length` of them
//     (default: to the end of the file). An absolute location, one that leaves
//     `base_dir` through "..", an unknown key, or a range past the end of the file is
//     InvalidArgument. `base_dir` is the model's directory ("" for the current one).
// A tensor with no elements may have no data. Negative dims, a rank above kMaxRank, an
// element count that overflows, a data size that does not match the shape, segmented
// tensors, string and other unsupported element types are InvalidArgument; errors
// name the tensor and say what was expected. File errors keep the code errno implies
// (NotFound, PermissionDenied, ...).
absl::StatusOr<NDArray> TensorFromProto(const onnx::TensorProto& t, const std::string& base_dir);

// Reads the serialized TensorProto at `path` (the input_N.pb and output_N.pb files of
// ONNX's test_data_set_* directories) and converts it with TensorFromProto, external data
// resolved against the file's directory. A file that cannot be read keeps the code
// errno implies; one larger than kMaxTensorProtoFileBytes is ResourceExhausted; one that
// is not a regular file or does not parse as a TensorProto is InvalidArgument. Errors
// name `path`.
//
// `declared_elem_type`, when given, is the element type the graph declares for the
// value: a UINT16 file where it declares BFLOAT16 holds bfloat16 bit patterns (ONNX's
// own test data stores bfloat16 so, numpy having no bfloat16) and is read as bf16.
absl::StatusOr<NDArray> ReadTensorProtoFile(const std::string& path,
                                            std::optional<int32_t> declared_elem_type = std::nullopt);

// Reads the file at `path` and parses it as `message`, a serialized `kind` ("TensorProto",
// "SequenceProto", ...): the test data sets' values that are not tensors. Errors as
// ReadTensorProtoFile's.
absl::Status ReadProtoFile(const std::string& path, std::string_view kind,
                           google::protobuf::MessageLite& message);

}  // namespace dynvm::compiler::onnx_frontend

#endif  // DYNVM_COMPILER_FRONTEND_ONNX_TENSOR_PROTO_H_
