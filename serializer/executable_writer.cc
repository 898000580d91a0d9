// SerializeExecutable and SaveExecutable: an ExecutableSpec to the bytes of an
// executable file (docs/file-format.md).
//
// The FlatBuffer is built in one deterministic pass (the same calls in the same order
// give the same bytes; attributes come sorted from their std::map), then the file is a
// list of pieces — header, FlatBuffer, padding, each tensor's bytes — that
// SerializeExecutable concatenates and SaveExecutable streams to disk without copying
// the weights a second time.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "flatbuffers/flatbuffers.h"
#include "objects/ndarray.h"
#include "objects/string_object.h"
#include "serializer/executable_file.h"
#include "serializer/executable_generated.h"
#include "serializer/internal/file_header.h"
#include "serializer/internal/file_io.h"

namespace dynvm::serializer {
namespace {

using internal::kHeaderSize;
using internal::kWeightsAlignment;

static_assert(std::endian::native == std::endian::little,
              "weights are stored little-endian and mapped as they are");
// The schema's enums mirror the runtime's; a new DType or kind must be added to both.
static_assert(static_cast<int>(fbs::DType::MAX) + 1 == kNumDTypes);
static_assert(static_cast<uint32_t>(fbs::ValueKind::MAX) ==
              static_cast<uint32_t>(vm::ValueSpec::Kind::kTuple));
static_assert(std::variant_size_v<kernels::AttrValue> ==
              static_cast<size_t>(fbs::AttrKind::MAX) + 1);

// The metadata must stay clearly below FlatBuffers' 2 GiB limit, which the builder
// enforces by aborting; SerializeExecutable refuses earlier with a status.
constexpr uint64_t kMaxMetadataBytes = uint64_t{1} << 30;

// Zeros for padding; no gap is longer than the weights alignment.
constexpr uint8_t kZeros[kWeightsAlignment] = {};

// A tensor constant and where its bytes go, relative to the weights section.
struct PlacedTensor {
  const NDArrayObj* array;
  uint64_t offset;
};

// An upper bound on the FlatBuffer bytes `spec` needs (every string, vector and table
// with generous overhead), so that oversized specs fail before the builder aborts.
uint64_t EstimateMetadataBytes(const vm::ExecutableSpec& spec) {
  constexpr uint64_t kTable = 96;  // vtable, table and offsets of one small table
  uint64_t total = kTable + spec.producer.size();
  std::function<void(const std::vector<vm::ValueSpec>&)> value_specs =
      [&](const std::vector<vm::ValueSpec>& specs) {
        for (const vm::ValueSpec& v : specs) {
          total += kTable + v.name.size();
          for (const vm::DimSpec& d : v.dims) total += kTable + d.symbol.size();
          value_specs(v.fields);
        }
      };
  for (const vm::Function& f : spec.functions) {
    total += kTable + f.name.size() + 4 * f.code.size();
    value_specs(f.params);
    value_specs(f.results);
  }
  for (const vm::KernelEntry& k : spec.kernels) {
    total += kTable + k.name.size();
    for (const auto& [name, value] : k.attrs) {
      total += kTable + name.size();
      if (const auto* s = std::get_if<std::string>(&value)) total += s->size();
      if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) total += 8 * v->size();
      if (const auto* v = std::get_if<std::vector<double>>(&value)) total += 8 * v->size();
    }
  }
  total += kTable + spec.native.cpu.size() + spec.native.object.size();
  for (const std::string& f : spec.native.features) total += kTable + f.size();
  for (const auto& [text, symbol] : spec.native.programs) {
    total += kTable + text.size() + symbol.size();
  }
  for (const Value& c : spec.constants) {
    total += kTable;
    if (const auto* s = c.As<StringObj>()) total += s->value().size();
    if (const auto* t = c.As<NDArrayObj>()) total += 8 * t->shape().size();
  }
  return total;
}

// Builds the FlatBuffer of a spec and places its tensors in the weights section.
class MetadataWriter {
 public:
  explicit MetadataWriter(const vm::ExecutableSpec& spec) : spec_(spec) {
    // Without this the builder drops fields equal to their default, and -0.0 == 0.0
    // would come back as +0.0.
    fbb_.ForceDefaults(true);
  }

  absl::Status Build() {
    std::vector<flatbuffers::Offset<fbs::Function>> functions;
    for (const vm::Function& f : spec_.functions) functions.push_back(WriteFunction(f));
    std::vector<flatbuffers::Offset<fbs::Kernel>> kernels;
    for (const vm::KernelEntry& k : spec_.kernels) kernels.push_back(WriteKernel(k));
    std::vector<flatbuffers::Offset<fbs::Constant>> constants;
    for (size_t i = 0; i < spec_.constants.size(); ++i) {
      DYNVM_ASSIGN_OR_RETURN(auto c, WriteConstant(i, spec_.constants[i]));
      constants.push_back(c);
    }
    flatbuffers::Offset<fbs::NativeCode> native;
    if (!spec_.native.object.empty()) {
      const vm::NativeCode& code = spec_.native;
      std::vector<flatbuffers::Offset<fbs::NativeProgram>> programs;
      for (const auto& [text, symbol] : code.programs) {
        programs.push_back(
            fbs::CreateNativeProgram(fbb_, fbb_.CreateString(text), fbb_.CreateString(symbol)));
      }
      native = fbs::CreateNativeCode(
          fbb_, fbb_.CreateString(code.cpu), fbb_.CreateVectorOfStrings(code.features),
          fbb_.CreateVector(reinterpret_cast<const uint8_t*>(code.object.data()),
                            code.object.size()),
          fbb_.CreateVector(programs));
    }
    auto root = fbs::CreateExecutable(fbb_, fbb_.CreateString(spec_.producer),
                                      fbb_.CreateVector(functions), fbb_.CreateVector(kernels),
                                      fbb_.CreateVector(constants), native,
                                      spec_.sources.empty() ? 0 : fbb_.CreateVectorOfStrings(spec_.sources));
    fbs::FinishExecutableBuffer(fbb_, root);
    return absl::OkStatus();
  }

  absl::Span<const uint8_t> metadata() const {
    return {fbb_.GetBufferPointer(), fbb_.GetSize()};
  }
  const std::vector<PlacedTensor>& tensors() const { return tensors_; }
  uint64_t weights_size() const { return weights_size_; }

 private:
  flatbuffers::Offset<fbs::ValueSpec> WriteValueSpec(const vm::ValueSpec& spec) {
    std::vector<flatbuffers::Offset<fbs::Dim>> dims;
    for (const vm::DimSpec& d : spec.dims) {
      dims.push_back(fbs::CreateDim(fbb_, d.extent,
                                    d.symbol.empty() ? 0 : fbb_.CreateString(d.symbol)));
    }
    std::vector<flatbuffers::Offset<fbs::ValueSpec>> fields;
    for (const vm::ValueSpec& f : spec.fields) fields.push_back(WriteValueSpec(f));
    return fbs::CreateValueSpec(fbb_, spec.name.empty() ? 0 : fbb_.CreateString(spec.name),
                                static_cast<fbs::ValueKind>(spec.kind),
                                static_cast<fbs::DType>(spec.dtype), fbb_.CreateVector(dims),
                                fields.empty() ? 0 : fbb_.CreateVector(fields));
  }

  flatbuffers::Offset<fbs::Function> WriteFunction(const vm::Function& f) {
    auto specs = [&](const std::vector<vm::ValueSpec>& list) {
      std::vector<flatbuffers::Offset<fbs::ValueSpec>> out;
      for (const vm::ValueSpec& v : list) out.push_back(WriteValueSpec(v));
      return fbb_.CreateVector(out);
    };
    auto name = fbb_.CreateString(f.name);
    auto params = specs(f.params);
    auto results = specs(f.results);
    auto code = fbb_.CreateVector(f.code);
    flatbuffers::Offset<flatbuffers::Vector<const fbs::SourceEntry*>> source_map;
    if (!f.source_map.empty()) {
      std::vector<fbs::SourceEntry> entries;
      for (const vm::SourceEntry& e : f.source_map) entries.emplace_back(e.pc, e.source);
      source_map = fbb_.CreateVectorOfStructs(entries);
    }
    return fbs::CreateFunction(fbb_, name, f.num_registers, params, results, code, source_map);
  }

  flatbuffers::Offset<fbs::Attr> WriteAttr(const std::string& name,
                                          const kernels::AttrValue& value) {
    auto name_offset = fbb_.CreateString(name);
    // Vectors and strings must be built before the table that points to them.
    flatbuffers::Offset<flatbuffers::String> str;
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints;
    flatbuffers::Offset<flatbuffers::Vector<double>> floats;
    if (const auto* s = std::get_if<std::string>(&value)) str = fbb_.CreateString(*s);
    if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) ints = fbb_.CreateVector(*v);
    if (const auto* v = std::get_if<std::vector<double>>(&value)) floats = fbb_.CreateVector(*v);
    fbs::AttrBuilder attr(fbb_);
    attr.add_name(name_offset);
    // AttrKind values follow the order of the alternatives of kernels::AttrValue.
    attr.add_kind(static_cast<fbs::AttrKind>(value.index()));
    if (const auto* i = std::get_if<int64_t>(&value)) attr.add_int_value(*i);
    if (const auto* d = std::get_if<double>(&value)) attr.add_float_value(*d);
    if (!str.IsNull()) attr.add_string_value(str);
    if (!ints.IsNull()) attr.add_ints(ints);
    if (!floats.IsNull()) attr.add_floats(floats);
    return attr.Finish();
  }

  flatbuffers::Offset<fbs::Kernel> WriteKernel(const vm::KernelEntry& k) {
    auto name = fbb_.CreateString(k.name);
    std::vector<flatbuffers::Offset<fbs::Attr>> attrs;
    for (const auto& [attr_name, value] : k.attrs) attrs.push_back(WriteAttr(attr_name, value));
    return fbs::CreateKernel(fbb_, name, k.num_inputs, k.num_outputs, fbb_.CreateVector(attrs));
  }

  absl::StatusOr<flatbuffers::Offset<fbs::Constant>> WriteConstant(size_t index,
                                                                   const Value& c) {
    if (const NDArrayObj* t = c.As<NDArrayObj>()) {
      if (t->dtype() == DType::kString) {  // its elements are pointers into this process
        return absl::UnimplementedError(absl::StrFormat(
            "constant %d is a string tensor %s: the file format holds no string tensors",
            index, ShapeToString(t->shape())));
      }
      return WriteTensor(*t);
    }
    flatbuffers::Offset<flatbuffers::String> str;
    if (const StringObj* s = c.As<StringObj>()) str = fbb_.CreateString(s->value());
    fbs::ConstantBuilder b(fbb_);
    if (!str.IsNull()) {
      b.add_kind(fbs::ConstantKind::String);
      b.add_string_value(str);
    } else if (c.is_int()) {
      b.add_kind(fbs::ConstantKind::Int);
      b.add_int_value(c.int_value());
    } else if (c.is_float()) {
      b.add_kind(fbs::ConstantKind::Float);
      b.add_float_value(c.float_value());
    } else if (c.is_bool()) {
      b.add_kind(fbs::ConstantKind::Bool);
      b.add_bool_value(c.bool_value());
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constant %d is a %s: the file format holds tensors, strings, ints, floats and "
          "bools",
          index, c.TypeName()));
    }
    return b.Finish();
  }

  flatbuffers::Offset<fbs::Constant> WriteTensor(const NDArrayObj& t) {
    // Tensors are laid out in constant order, each at the next 64-byte boundary; the
    // section's size is a multiple of 64 too, so no bound check is needed here.
    const uint64_t offset = weights_size_;
    tensors_.push_back({&t, offset});
    internal::AlignUp(offset + t.nbytes(), kWeightsAlignment, &weights_size_);
    auto shape = fbb_.CreateVector(t.shape().data(), t.shape().size());
    fbs::ConstantBuilder b(fbb_);
    b.add_kind(fbs::ConstantKind::Tensor);
    b.add_dtype(static_cast<fbs::DType>(t.dtype()));
    b.add_shape(shape);
    b.add_offset(offset);
    b.add_nbytes(t.nbytes());
    return b.Finish();
  }

  const vm::ExecutableSpec& spec_;
  flatbuffers::FlatBufferBuilder fbb_{1 << 16};
  std::vector<PlacedTensor> tensors_;
  uint64_t weights_size_ = 0;
};

// The whole file as pieces over `writer`'s buffers (header in `header`).
std::vector<absl::Span<const uint8_t>> FilePieces(
    const MetadataWriter& writer, std::array<uint8_t, kHeaderSize>& header,
    uint64_t* file_size) {
  internal::FileHeader h;
  h.major_version = kFormatMajorVersion;
  h.minor_version = kFormatMinorVersion;
  h.metadata_offset = kHeaderSize;
  h.metadata_size = writer.metadata().size();
  internal::AlignUp(h.metadata_offset + h.metadata_size, kWeightsAlignment, &h.weights_offset);
  h.weights_size = writer.weights_size();
  header = internal::EncodeFileHeader(h);

  std::vector<absl::Span<const uint8_t>> pieces = {header, writer.metadata()};
  uint64_t at = h.metadata_offset + h.metadata_size;  // file offset reached so far
  auto pad_to = [&](uint64_t target) {
    for (; at < target; at += std::min<uint64_t>(target - at, sizeof(kZeros))) {
      pieces.emplace_back(kZeros, std::min<uint64_t>(target - at, sizeof(kZeros)));
    }
  };
  for (const PlacedTensor& t : writer.tensors()) {
    pad_to(h.weights_offset + t.offset);
    pieces.emplace_back(static_cast<const uint8_t*>(t.array->data()), t.array->nbytes());
    at += t.array->nbytes();
  }
  pad_to(h.weights_offset + h.weights_size);
  *file_size = at;
  return pieces;
}

absl::Status CheckSize(const vm::ExecutableSpec& spec) {
  const uint64_t estimate = EstimateMetadataBytes(spec);
  if (estimate > kMaxMetadataBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "executable metadata needs about %d bytes, above the %d-byte limit of the format "
        "(weights are not counted: large tensors belong in constants)",
        estimate, kMaxMetadataBytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> SerializeExecutable(const vm::ExecutableSpec& spec) {
  DYNVM_RETURN_IF_ERROR(CheckSize(spec));
  MetadataWriter writer(spec);
  DYNVM_RETURN_IF_ERROR(writer.Build());
  std::array<uint8_t, kHeaderSize> header;
  uint64_t file_size = 0;
  std::vector<absl::Span<const uint8_t>> pieces = FilePieces(writer, header, &file_size);
  std::string out;
  out.reserve(file_size);
  for (absl::Span<const uint8_t> piece : pieces) {
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  }
  return out;
}

absl::Status SaveExecutable(const vm::ExecutableSpec& spec, const std::string& path) {
  DYNVM_RETURN_IF_ERROR(CheckSize(spec));
  MetadataWriter writer(spec);
  DYNVM_RETURN_IF_ERROR(writer.Build());
  std::array<uint8_t, kHeaderSize> header;
  uint64_t file_size = 0;
  return internal::WriteFile(path, FilePieces(writer, header, &file_size));
}

}  // namespace dynvm::serializer
