// ParseExecutable and the loaders: the bytes of an executable file to an ExecutableSpec,
// trusting nothing in them (docs/file-format.md, "What the loader checks").
//
// Order of checks: the header (size, magic, version), the section bounds, the
// FlatBuffers verifier over the metadata region, then every field as it is read —
// presence, enum ranges, counts, each tensor's place in the weights section. Only then
// does LoadExecutable hand the spec to Executable::Create, which runs the bytecode
// verifier and binds the kernels.
#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "flatbuffers/flatbuffers.h"
#include "objects/ndarray.h"
#include "objects/opaque.h"
#include "objects/string_object.h"
#include "serializer/executable_file.h"
#include "serializer/executable_generated.h"
#include "serializer/internal/file_header.h"
#include "serializer/internal/file_io.h"

namespace dynvm::serializer {
namespace {

using internal::FileHeader;
using internal::kHeaderSize;
using internal::kMetadataAlignment;
using internal::kWeightsAlignment;

static_assert(std::endian::native == std::endian::little,
              "weights are stored little-endian and mapped as they are");

// Nesting of our schema is root > Function > ValueSpec > Dim; anything deeper is not a
// file we wrote.
constexpr flatbuffers::uoffset_t kMaxDepth = 16;

// `status` with `context` prepended to its message, same code.
absl::Status Annotate(const absl::Status& status, std::string_view context) {
  return absl::Status(status.code(), absl::StrFormat("%s: %s", context, status.message()));
}

absl::Status Invalid(absl::string_view message) { return absl::InvalidArgumentError(message); }

// Checks the header's section bounds against the `size` bytes present.
absl::Status CheckSections(const FileHeader& h, uint64_t size) {
  if (h.metadata_offset < kHeaderSize || h.metadata_offset % kMetadataAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "metadata section offset %d must be a multiple of %d at or after the %d-byte header",
        h.metadata_offset, kMetadataAlignment, kHeaderSize));
  }
  if (h.metadata_offset > size || h.metadata_size > size - h.metadata_offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "file is truncated: the metadata section [%d, +%d) ends past the file's %d bytes",
        h.metadata_offset, h.metadata_size, size));
  }
  if (h.metadata_size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "metadata section of %d bytes exceeds the FlatBuffers limit", h.metadata_size));
  }
  const uint64_t metadata_end = h.metadata_offset + h.metadata_size;
  if (h.weights_offset % kWeightsAlignment != 0 || h.weights_offset < metadata_end) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "weights section offset %d must be a multiple of %d at or after the metadata end %d",
        h.weights_offset, kWeightsAlignment, metadata_end));
  }
  if (h.weights_offset > size || h.weights_size > size - h.weights_offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "file is truncated: the weights section [%d, +%d) ends past the file's %d bytes",
        h.weights_offset, h.weights_size, size));
  }
  return absl::OkStatus();
}

// Reads a verified FlatBuffer into an ExecutableSpec, checking every value.
class MetadataReader {
 public:
  MetadataReader(const fbs::Executable* root, uint64_t metadata_size,
                 absl::Span<const uint8_t> weights, ObjectRef<Object> owner)
      : root_(root), budget_(metadata_size), weights_(weights), owner_(std::move(owner)) {}

  absl::StatusOr<vm::ExecutableSpec> Read() {
    vm::ExecutableSpec spec;
    DYNVM_ASSIGN_OR_RETURN(spec.producer, ReadOptionalString(root_->producer()));
    if (const auto* functions = root_->functions()) {
      for (flatbuffers::uoffset_t i = 0; i < functions->size(); ++i) {
        absl::StatusOr<vm::Function> f = ReadFunction(*functions->Get(i), i);
        if (!f.ok()) return f.status();
        spec.functions.push_back(*std::move(f));
      }
    }
    if (const auto* kernels = root_->kernels()) {
      for (flatbuffers::uoffset_t i = 0; i < kernels->size(); ++i) {
        absl::StatusOr<vm::KernelEntry> k = ReadKernel(*kernels->Get(i));
        if (!k.ok()) return Annotate(k.status(), absl::StrFormat("kernel table entry %d", i));
        spec.kernels.push_back(*std::move(k));
      }
    }
    if (const auto* constants = root_->constants()) {
      for (flatbuffers::uoffset_t i = 0; i < constants->size(); ++i) {
        absl::StatusOr<Value> c = ReadConstant(*constants->Get(i));
        if (!c.ok()) return Annotate(c.status(), absl::StrFormat("constant %d", i));
        spec.constants.push_back(*std::move(c));
      }
    }
    if (const fbs::NativeCode* native = root_->native()) {
      absl::StatusOr<vm::NativeCode> code = ReadNativeCode(*native);
      if (!code.ok()) return Annotate(code.status(), "native code");
      spec.native = *std::move(code);
    }
    if (const auto* sources = root_->sources()) {
      for (flatbuffers::uoffset_t i = 0; i < sources->size(); ++i) {
        absl::StatusOr<std::string> text = ReadOptionalString(sources->Get(i));
        if (!text.ok()) return Annotate(text.status(), absl::StrFormat("source %d", i));
        spec.sources.push_back(*std::move(text));
      }
    }
    spec.backing = owner_;
    return spec;
  }

 private:
  // Counts `bytes` of strings and vectors against the metadata size. A well-formed
  // file stores each once, so it never exceeds it; a crafted one that points many
  // tables at one large vector would otherwise make us copy it without bound.
  absl::Status Charge(uint64_t bytes) {
    if (bytes > budget_) {
      return Invalid("metadata refers to the same data many times over: not a file dynvm "
                     "writes");
    }
    budget_ -= bytes;
    return absl::OkStatus();
  }

  absl::StatusOr<vm::NativeCode> ReadNativeCode(const fbs::NativeCode& in) {
    vm::NativeCode out;
    DYNVM_ASSIGN_OR_RETURN(out.cpu, ReadOptionalString(in.cpu()));
    if (const auto* features = in.features()) {
      for (flatbuffers::uoffset_t i = 0; i < features->size(); ++i) {
        DYNVM_ASSIGN_OR_RETURN(std::string f, ReadOptionalString(features->Get(i)));
        out.features.push_back(std::move(f));
      }
    }
    if (const auto* object = in.object()) {
      DYNVM_RETURN_IF_ERROR(Charge(object->size()));
      out.object.assign(reinterpret_cast<const char*>(object->data()), object->size());
    }
    if (const auto* programs = in.programs()) {
      for (flatbuffers::uoffset_t i = 0; i < programs->size(); ++i) {
        const fbs::NativeProgram& p = *programs->Get(i);
        DYNVM_ASSIGN_OR_RETURN(std::string text, ReadRequiredString(p.program(), "program"));
        DYNVM_ASSIGN_OR_RETURN(std::string symbol, ReadRequiredString(p.symbol(), "symbol"));
        if (!out.programs.emplace(std::move(text), std::move(symbol)).second) {
          return Invalid(absl::StrFormat("program %d is listed twice", i));
        }
      }
    }
    return out;
  }

  // The string `s`; a missing one is empty.
  absl::StatusOr<std::string> ReadOptionalString(const flatbuffers::String* s) {
    if (s == nullptr) return std::string();
    DYNVM_RETURN_IF_ERROR(Charge(s->size()));
    return s->str();
  }
  // The string `s`, which must be present; `what` names it in the error.
  absl::StatusOr<std::string> ReadRequiredString(const flatbuffers::String* s,
                                                 std::string_view what) {
    if (s == nullptr) return absl::InvalidArgumentError(absl::StrFormat("missing %s", what));
    return ReadOptionalString(s);
  }

  // The elements of a vector of scalars; a missing vector is empty. Copied with memcpy:
  // FlatBuffers 2.0.8's verifier checks a vector's 4-byte length for alignment but not
  // its elements, so the int64 and double elements of a corrupt file may sit at an
  // address that is not 8-aligned.
  template <typename T>
  absl::StatusOr<std::vector<T>> ReadVector(const flatbuffers::Vector<T>* v) {
    static_assert(std::is_arithmetic_v<T>);
    std::vector<T> out;
    if (v == nullptr) return out;
    DYNVM_RETURN_IF_ERROR(Charge(uint64_t{v->size()} * sizeof(T)));
    out.resize(v->size());
    if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
    return out;
  }

  static absl::StatusOr<DType> ReadDType(fbs::DType raw) {
    if (!IsValidDType(static_cast<uint32_t>(raw))) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown dtype %d: this runtime has %d dtypes",
                          static_cast<uint32_t>(raw), kNumDTypes));
    }
    return static_cast<DType>(raw);
  }

  absl::StatusOr<vm::ValueSpec> ReadValueSpec(const fbs::ValueSpec& in, int depth);
  absl::StatusOr<std::vector<vm::ValueSpec>> ReadValueSpecs(
      const flatbuffers::Vector<flatbuffers::Offset<fbs::ValueSpec>>* list,
      std::string_view what);
  absl::StatusOr<vm::Function> ReadFunction(const fbs::Function& in, uint32_t index);
  absl::StatusOr<kernels::AttrValue> ReadAttrValue(const fbs::Attr& in);
  absl::StatusOr<vm::KernelEntry> ReadKernel(const fbs::Kernel& in);
  absl::StatusOr<Value> ReadConstant(const fbs::Constant& in);
  absl::StatusOr<Value> ReadTensor(const fbs::Constant& in);

  const fbs::Executable* root_;
  uint64_t budget_;
  absl::Span<const uint8_t> weights_;
  ObjectRef<Object> owner_;
  Storage weights_storage_;  // one view of the whole section, made on first use
};

// `depth` is 1 for a signature's own specs and one more per enclosing tuple.
absl::StatusOr<vm::ValueSpec> MetadataReader::ReadValueSpec(const fbs::ValueSpec& in, int depth) {
  vm::ValueSpec out;
  DYNVM_ASSIGN_OR_RETURN(out.name, ReadOptionalString(in.name()));
  const uint32_t kind = static_cast<uint32_t>(in.kind());
  if (kind > static_cast<uint32_t>(fbs::ValueKind::MAX)) {
    return absl::InvalidArgumentError(absl::StrFormat("unknown value kind %d", kind));
  }
  out.kind = static_cast<vm::ValueSpec::Kind>(kind);
  DYNVM_ASSIGN_OR_RETURN(out.dtype, ReadDType(in.dtype()));
  if (const auto* dims = in.dims()) {
    if (dims->size() > static_cast<uint32_t>(kMaxRank)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("rank %d above the maximum %d", dims->size(), kMaxRank));
    }
    for (const fbs::Dim* d : *dims) {
      DYNVM_ASSIGN_OR_RETURN(std::string symbol, ReadOptionalString(d->symbol()));
      out.dims.push_back(vm::DimSpec{d->extent(), std::move(symbol)});
    }
  }
  if (const auto* fields = in.fields(); fields != nullptr && fields->size() > 0) {
    if (depth >= vm::kMaxSpecDepth) {
      return absl::InvalidArgumentError(
          absl::StrFormat("tuples nested deeper than the maximum %d", vm::kMaxSpecDepth));
    }
    for (flatbuffers::uoffset_t i = 0; i < fields->size(); ++i) {
      absl::StatusOr<vm::ValueSpec> field = ReadValueSpec(*fields->Get(i), depth + 1);
      if (!field.ok()) return Annotate(field.status(), absl::StrFormat("field %d", i));
      out.fields.push_back(*std::move(field));
    }
  }
  return out;
}

absl::StatusOr<std::vector<vm::ValueSpec>> MetadataReader::ReadValueSpecs(
    const flatbuffers::Vector<flatbuffers::Offset<fbs::ValueSpec>>* list,
    std::string_view what) {
  std::vector<vm::ValueSpec> out;
  if (list == nullptr) return out;
  for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
    absl::StatusOr<vm::ValueSpec> spec = ReadValueSpec(*list->Get(i), 1);
    if (!spec.ok()) return Annotate(spec.status(), absl::StrFormat("%s %d", what, i));
    out.push_back(*std::move(spec));
  }
  return out;
}

absl::StatusOr<vm::Function> MetadataReader::ReadFunction(const fbs::Function& in,
                                                          uint32_t index) {
  vm::Function out;
  absl::Status status = [&]() -> absl::Status {
    DYNVM_ASSIGN_OR_RETURN(out.name, ReadRequiredString(in.name(), "name"));
    out.num_registers = in.num_registers();
    DYNVM_ASSIGN_OR_RETURN(out.params, ReadValueSpecs(in.params(), "parameter"));
    DYNVM_ASSIGN_OR_RETURN(out.results, ReadValueSpecs(in.results(), "result"));
    if (in.code() == nullptr) return Invalid("missing code");
    DYNVM_ASSIGN_OR_RETURN(out.code, ReadVector(in.code()));
    if (const auto* map = in.source_map()) {
      DYNVM_RETURN_IF_ERROR(Charge(uint64_t{map->size()} * sizeof(fbs::SourceEntry)));
      for (const fbs::SourceEntry* e : *map) out.source_map.push_back({e->pc(), e->source()});
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) {
    return Annotate(status, in.name() == nullptr
                                ? absl::StrFormat("function %d", index)
                                : absl::StrFormat("function %d ('%s')", index, out.name));
  }
  return out;
}

absl::StatusOr<kernels::AttrValue> MetadataReader::ReadAttrValue(const fbs::Attr& in) {
  switch (in.kind()) {
    case fbs::AttrKind::Int: return kernels::AttrValue(in.int_value());
    case fbs::AttrKind::Float: return kernels::AttrValue(in.float_value());
    case fbs::AttrKind::String: {
      DYNVM_ASSIGN_OR_RETURN(std::string s,
                             ReadRequiredString(in.string_value(), "the string value"));
      return kernels::AttrValue(std::move(s));
    }
    case fbs::AttrKind::IntList: {
      if (in.ints() == nullptr) return Invalid("int list attribute without a value");
      DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadVector(in.ints()));
      return kernels::AttrValue(std::move(v));
    }
    case fbs::AttrKind::FloatList: {
      if (in.floats() == nullptr) return Invalid("float list attribute without a value");
      DYNVM_ASSIGN_OR_RETURN(std::vector<double> v, ReadVector(in.floats()));
      return kernels::AttrValue(std::move(v));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown attribute kind %d", static_cast<uint32_t>(in.kind())));
}

absl::StatusOr<vm::KernelEntry> MetadataReader::ReadKernel(const fbs::Kernel& in) {
  vm::KernelEntry out;
  DYNVM_ASSIGN_OR_RETURN(out.name, ReadRequiredString(in.name(), "name"));
  out.num_inputs = in.num_inputs();
  out.num_outputs = in.num_outputs();
  if (const auto* attrs = in.attrs()) {
    for (flatbuffers::uoffset_t i = 0; i < attrs->size(); ++i) {
      const fbs::Attr& attr = *attrs->Get(i);
      absl::StatusOr<std::string> name = ReadRequiredString(attr.name(), "name");
      if (!name.ok()) {
        return Annotate(name.status(), absl::StrFormat("kernel '%s' attribute %d", out.name, i));
      }
      absl::StatusOr<kernels::AttrValue> value = ReadAttrValue(attr);
      if (!value.ok()) {
        return Annotate(value.status(),
                        absl::StrFormat("kernel '%s' attribute '%s'", out.name, *name));
      }
      if (!out.attrs.emplace(*name, *std::move(value)).second) {
        return absl::InvalidArgumentError(
            absl::StrFormat("kernel '%s': attribute '%s' appears twice", out.name, *name));
      }
    }
  }
  return out;
}

absl::StatusOr<Value> MetadataReader::ReadConstant(const fbs::Constant& in) {
  switch (in.kind()) {
    case fbs::ConstantKind::Tensor: return ReadTensor(in);
    case fbs::ConstantKind::String: {
      DYNVM_ASSIGN_OR_RETURN(std::string s,
                             ReadRequiredString(in.string_value(), "the string value"));
      return Value(MakeObject<StringObj>(s));
    }
    case fbs::ConstantKind::Int: return Value::Int(in.int_value());
    case fbs::ConstantKind::Float: return Value::Float(in.float_value());
    case fbs::ConstantKind::Bool: return Value::Bool(in.bool_value());
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown constant kind %d", static_cast<uint32_t>(in.kind())));
}

absl::StatusOr<Value> MetadataReader::ReadTensor(const fbs::Constant& in) {
  DYNVM_ASSIGN_OR_RETURN(DType dtype, ReadDType(in.dtype()));
  if (dtype == DType::kString) {  // a signature's dtype only (executable.fbs)
    return Invalid("tensor constant of dtype string: constants hold no strings");
  }
  if (in.shape() == nullptr) return Invalid("tensor constant without a shape");
  if (in.shape()->size() > static_cast<uint32_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d above the maximum %d", in.shape()->size(), kMaxRank));
  }
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadVector(in.shape()));
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(shape));
  uint64_t nbytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), DTypeSize(dtype), &nbytes) ||
      nbytes != in.nbytes()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor %s %s has %d elements, but the file gives it %d bytes", DTypeName(dtype),
        ShapeToString(shape), count, in.nbytes()));
  }
  const uint64_t offset = in.offset();
  if (offset % kWeightsAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor offset %d in the weights section is not a multiple of %d", offset,
        kWeightsAlignment));
  }
  if (offset > weights_.size() || nbytes > weights_.size() - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor bytes [%d, +%d) lie outside the %d-byte weights section", offset, nbytes,
        weights_.size()));
  }
  if (!weights_storage_) {
    // The mapping is read-only; constants are never written, so dropping const is safe.
    weights_storage_ = MakeObject<StorageObj>(const_cast<uint8_t*>(weights_.data()),
                                              weights_.size(), owner_);
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray array, NDArrayObj::Create(weights_storage_, offset, dtype, shape));
  return Value(std::move(array));
}

// Runs the FlatBuffers verifier over the metadata region and returns its root.
absl::StatusOr<const fbs::Executable*> VerifyMetadata(const uint8_t* data, uint64_t size) {
  // A table takes at least 4 bytes and our writer never shares one, so a legitimate
  // file has fewer than size / 4 tables; the bound keeps verification linear in the
  // size even when a crafted file points many offsets at one table.
  const auto max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 16);
  flatbuffers::Verifier verifier(data, static_cast<size_t>(size), kMaxDepth, max_tables);
  if (size < 8 || !fbs::ExecutableBufferHasIdentifier(data)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "metadata section lacks the FlatBuffers file identifier \"%s\"",
        fbs::ExecutableIdentifier()));
  }
  if (!fbs::VerifyExecutableBuffer(verifier)) {
    return Invalid("metadata section fails FlatBuffers verification: the file is corrupt or "
                   "truncated");
  }
  return fbs::GetExecutable(data);
}

}  // namespace

absl::StatusOr<vm::ExecutableSpec> ParseExecutable(absl::Span<const uint8_t> bytes,
                                                   ObjectRef<Object> owner) {
  DYNVM_ASSIGN_OR_RETURN(FileHeader header,
                         internal::DecodeFileHeader(bytes, kFormatMajorVersion));
  // FlatBuffers reads scalars in place and tensors are viewed in place: both need the
  // buffer aligned to their largest scalar (8 bytes; mmap and our copies give 64).
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kMetadataAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "executable bytes at %p are not %d-byte aligned: use LoadExecutableFromMemory, "
        "which copies them to an aligned buffer",
        bytes.data(), kMetadataAlignment));
  }
  DYNVM_RETURN_IF_ERROR(CheckSections(header, bytes.size()));
  DYNVM_ASSIGN_OR_RETURN(const fbs::Executable* root,
                         VerifyMetadata(bytes.data() + header.metadata_offset,
                                        header.metadata_size));
  absl::Span<const uint8_t> weights = bytes.subspan(header.weights_offset, header.weights_size);
  return MetadataReader(root, header.metadata_size, weights, std::move(owner)).Read();
}

absl::StatusOr<std::shared_ptr<const vm::Executable>> LoadExecutable(
    const std::string& path, const kernels::KernelRegistry& registry, const vm::LoadOptions& options) {
  DYNVM_ASSIGN_OR_RETURN(internal::MappedFile file, internal::MapFile(path));
  absl::StatusOr<vm::ExecutableSpec> spec = ParseExecutable(file.bytes, file.owner);
  if (!spec.ok()) return Annotate(spec.status(), path);
  auto exe = vm::Executable::Create(*std::move(spec), registry, options);
  if (!exe.ok()) return Annotate(exe.status(), path);
  return exe;
}

absl::StatusOr<std::shared_ptr<const vm::Executable>> LoadExecutableFromMemory(
    absl::Span<const uint8_t> bytes, const kernels::KernelRegistry& registry, const vm::LoadOptions& options) {
  // Aligned like a mapping's start, so tensors land 64-byte aligned as when mapped.
  static constexpr std::align_val_t kAlign{kWeightsAlignment};
  void* copy = ::operator new(std::max<size_t>(bytes.size(), 1), kAlign, std::nothrow);
  if (copy == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate %d bytes for a copy of the executable", bytes.size()));
  }
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  ObjectRef<Object> owner = MakeOpaque([copy] { ::operator delete(copy, kAlign); });
  DYNVM_ASSIGN_OR_RETURN(
      vm::ExecutableSpec spec,
      ParseExecutable(absl::Span<const uint8_t>(static_cast<const uint8_t*>(copy), bytes.size()),
                      owner));
  return vm::Executable::Create(std::move(spec), registry, options);
}

absl::StatusOr<std::shared_ptr<const vm::Executable>> ReloadExecutable(
    const vm::ExecutableSpec& spec, const kernels::KernelRegistry& registry) {
  DYNVM_ASSIGN_OR_RETURN(const std::string bytes, SerializeExecutable(spec));
  return LoadExecutableFromMemory(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), registry,
      vm::LoadOptions{.trust_native_code = true});
}

}  // namespace dynvm::serializer
