// Reads the metadata section that TVM's Relay printer (`astext()`, TVM 0.7 to 0.19)
// appends to a program after a `#[metadata]` line: the tensors that
// `meta[relay.Constant][i]` refers to, so that a program saved with its weights
// compiles without an .npz beside it.
//
//   #[metadata]
//   {
//     "root": 1,
//     "nodes": [
//       {"type_key": ""},
//       {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
//       {"type_key": "Array", "data": [3]},
//       {"type_key": "relay.Constant",
//        "attrs": {"_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "0"}}
//     ],
//     "b64ndarrays": ["P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAgAAAAIgAQACAAAAAAAAAAMA..."],
//     "attrs": {"tvm_version": "0.19.0"}
//   }
//
//   absl::StatusOr<std::vector<NDArray>> constants =
//       ParseRelayMetadata(text.substr(end_of_metadata_line), "model.relay");
//
// The section is TVM's JSON object graph (node/serialization.cc, SaveJSON) of a
// Map<String, Array<Object>> from type key to the objects printed as meta[key][i].
// Nodes refer to each other by index into "nodes"; node 0 is null. A node's "attrs" are
// all strings: a relay.Constant's "data" is the decimal index of its tensor in
// "b64ndarrays". Each of those is the base64 of one tensor in TVM's NDArray binary format
// (runtime/ndarray.h, SaveDLTensor), little-endian:
//
//   offset    size     field
//   0         8        magic 0xDD5E40F096B4A13F
//   8         8        reserved
//   16        4, 4     device type (1, the CPU: TVM saves every tensor as a CPU one), id
//   24        4        ndim, 0..kMaxRank
//   28        1, 1, 2  dtype: DLPack code, bits, lanes (1)
//   32        8*ndim   shape
//   32+8*ndim 8        data byte size: elements x ceil(bits / 8)
//   40+8*ndim size     the elements, in C order
//
// Dtypes: float16/32/64, bfloat16, int8..64, uint8..64, and bool both as TVM writes it
// (uint, 1 bit, a byte per element) and as later DLPack does (code 6, 8 bits); bools
// are normalised to 0/1.
#ifndef DYNVM_COMPILER_FRONTEND_RELAY_TEXT_METADATA_H_
#define DYNVM_COMPILER_FRONTEND_RELAY_TEXT_METADATA_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "objects/ndarray.h"

namespace dynvm::compiler {

// The relay.Constant tensors of the metadata section `json` (the text after the
// `#[metadata]` line), in the order of the map's relay.Constant array: element i is
// meta[relay.Constant][i]. Two constants that share a tensor share one NDArray. The
// tensors own fresh storage from the naive allocator.
//
// Only what leads to the constants is read: other keys of the map (SourceName,
// VirtualDevice, ...), the nodes they reach and tensors no constant refers to are
// ignored; a map without relay.Constant gives no tensors. Anything malformed on that
// path is InvalidArgument, `source_name: metadata: ` then what was wrong and what was
// expected: JSON syntax, a missing root or nodes, a node index out of range or of the
// wrong type, a data index that is not a decimal number or is out of range, bad base64,
// and in a tensor a wrong magic or device, truncated or trailing bytes, a rank over
// kMaxRank, a negative dim, an element count that overflows, a byte size that does not
// match the shape and dtype, a dtype we do not have or with lanes other than 1.
absl::StatusOr<std::vector<NDArray>> ParseRelayMetadata(std::string_view json,
                                                        std::string_view source_name);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_FRONTEND_RELAY_TEXT_METADATA_H_
