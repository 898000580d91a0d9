// The Open Inference Protocol (KServe v2) on the wire: infer requests and responses as
// JSON, with the binary tensor data extension, to and from dynvm tensors.
//
// A request names each input, its KServe datatype and shape, and gives its elements
// either as JSON (`data`, flat or nested in row-major order) or as raw little-endian
// bytes after the JSON (`parameters.binary_data_size`, the JSON's length in the HTTP
// header Inference-Header-Content-Length). Before a tensor is allocated, its shape's
// element count and byte size are checked for overflow and against the data actually
// present: the JSON elements, or binary bytes inside the body. BYTES tensors (string
// tensors, objects/string_tensor.h) carry JSON strings, or in binary each element's
// length as 4 little-endian bytes followed by its bytes, as Triton's extension says.
//
// Memory: the JSON part is read as events (tools/serve/infer_json.h), the inputs' data
// as compact tokens rather than a tree. Measured on a body of N bytes holding 1,000,000
// INT64 elements written `1,` (the densest text): 6.8 N at the peak through operator new
// (tokens with their growth, the small tree of the rest), where nlohmann::json's tree
// of the same body alone takes 21 N (tests/tools/serve/inference_protocol_test.cc); plus
// the body itself and the tensor being filled (8 bytes per INT64 element: up to 4 N):
// ~12 N at the peak, freed when the request has been parsed. Binary data costs its size
// once more (the tensor). Bound N with the server's max_body_bytes.
//
//   absl::StatusOr<InferRequest> request = ParseInferRequest(body, json_length, allocator);
//   ... run ...
//   EncodedResponse response = EncodeInferResponse("bert", request->id, outputs);
//
// https://kserve.github.io/website/latest/modelserving/data_plane/v2_protocol/ and
// https://github.com/triton-inference-server/server/blob/main/docs/protocol/extension_binary_data.md
#ifndef DYNVM_TOOLS_SERVE_INFERENCE_PROTOCOL_H_
#define DYNVM_TOOLS_SERVE_INFERENCE_PROTOCOL_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"
#include "objects/value.h"

namespace dynvm::tools::serve {

// The HTTP header holding the length of the JSON part of a body with binary tensors.
inline constexpr char kHeaderLengthHeader[] = "Inference-Header-Content-Length";

// The KServe datatype of `dtype`: "FP32", "FP64", "FP16", "BF16", "INT8" to "INT64",
// "UINT8" to "UINT64", "BOOL", "BYTES" (strings).
std::string KServeDatatype(DType dtype);
// The dtype of a KServe datatype name (KServeDatatype's inverse); InvalidArgument for an
// unknown name, listing the supported ones.
absl::StatusOr<DType> ParseKServeDatatype(std::string_view name);

// One input of a request: its name and its tensor (from the request's allocator).
struct InferInput {
  std::string name;
  NDArray tensor;
};

// One entry of a request's `outputs`: which output to return and how.
struct RequestedOutput {
  std::string name;
  // parameters.binary_data: bytes after the JSON instead of `data`; when absent, the
  // request's binary_data_output decides. An explicit false overrides that.
  std::optional<bool> binary;
};

struct InferRequest {
  std::string id;                        // echoed in the response; empty if absent
  std::vector<InferInput> inputs;        // in the request's order
  std::vector<RequestedOutput> outputs;  // empty: every output
  bool binary_outputs = false;           // parameters.binary_data_output: the default
                                         // for outputs not listed with binary_data
};

// Parses the body of POST /v2/models/NAME/infer. `json_length` is the value of the
// Inference-Header-Content-Length header: the body's first `json_length` bytes are the
// JSON and the rest the binary data of the inputs that declare binary_data_size, in
// order; without it the whole body is JSON. InvalidArgument says what is wrong, naming
// the input: malformed JSON (or a number past double's range), a missing or mistyped
// field, an unknown datatype, a bad shape, nested data that does not follow the shape,
// an element that is not of the datatype or out of its range (with its flat index;
// floats must stay finite in FP32, FP16, BF16), a count of elements that does not
// match the shape, binary data that overruns the body or is left over. Never throws.
absl::StatusOr<InferRequest> ParseInferRequest(std::string_view body,
                                               std::optional<size_t> json_length,
                                               const std::shared_ptr<Allocator>& allocator);

// One output of a response.
struct InferOutput {
  std::string name;
  Value value;     // a tensor, or an int, float or bool (a 0-d INT64, FP64, BOOL)
  bool binary = false;
};

// A response body and, when some output is binary, the length of its JSON part (for
// Inference-Header-Content-Length; the content type is then application/octet-stream).
struct EncodedResponse {
  std::string body;
  std::optional<size_t> json_length;
};

// The body of an infer response: {"model_name", "id" (when not empty), "outputs": [{"name",
// "datatype", "shape", "data"}]}. Floats are written with the fewest digits that read
// back to the same value in their dtype; NaN and infinities, which JSON lacks, as null
// (ask for binary outputs to get them exactly). InvalidArgument for an output that is
// neither a tensor nor a scalar.
absl::StatusOr<EncodedResponse> EncodeInferResponse(std::string_view model_name,
                                                    std::string_view id,
                                                    absl::Span<const InferOutput> outputs);

// The body of every error response: {"error": `message`}.
std::string ErrorBody(std::string_view message);

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_INFERENCE_PROTOCOL_H_
