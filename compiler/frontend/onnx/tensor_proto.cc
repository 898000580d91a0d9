// ONNX TensorProto (onnx/onnx.proto, "Tensors") to NDArray. The rules followed:
//
//   - raw_data holds the elements little-endian in C order ("fixed-width, little-endian
//     order"); bool is one byte per element;
//   - each type has one typed field: float_data for FLOAT, double_data for DOUBLE,
//     int64_data for INT64, uint64_data for UINT32 and UINT64, int32_data for INT32,
//     INT16, INT8, UINT16, UINT8, BOOL, FLOAT16 and BFLOAT16 (the last two as their
//     uint16 bit patterns);
//   - data_location EXTERNAL reads the bytes from a file named by the external_data
//     entries `location`, `offset` and `length` (`checksum` is allowed and ignored).
// Segments (`segment`) split one tensor across messages; nothing in the ONNX tool chain
// writes them, so they are refused rather than half supported.
#include "compiler/frontend/onnx/tensor_proto.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "objects/allocator.h"
#include "objects/string_tensor.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

static_assert(std::endian::native == std::endian::little,
              "raw_data and external data are little-endian and copied as they are");

using onnx::TensorProto;

// The supported element types, in the order error messages list them.
struct DTypeEntry {
  TensorProto::DataType onnx;
  DType dtype;
};
constexpr DTypeEntry kDTypes[] = {
    {TensorProto::FLOAT, DType::kF32},   {TensorProto::DOUBLE, DType::kF64},
    {TensorProto::FLOAT16, DType::kF16}, {TensorProto::BFLOAT16, DType::kBF16},
    {TensorProto::INT8, DType::kI8},     {TensorProto::INT16, DType::kI16},
    {TensorProto::INT32, DType::kI32},   {TensorProto::INT64, DType::kI64},
    {TensorProto::UINT8, DType::kU8},    {TensorProto::UINT16, DType::kU16},
    {TensorProto::UINT32, DType::kU32},  {TensorProto::UINT64, DType::kU64},
    {TensorProto::BOOL, DType::kBool},   {TensorProto::STRING, DType::kString},
};

std::string OnnxTypeName(int32_t elem_type) {
  if (!TensorProto::DataType_IsValid(elem_type)) return "unknown";
  return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
}

// "tensor 'w'" for messages; ONNX allows unnamed tensors (a Constant's value, say).
std::string Label(const TensorProto& t) {
  if (t.name().empty()) return "unnamed tensor";
  return absl::StrFormat("tensor '%s'", t.name());
}

// Adds `context` before the message of a failed `status`, keeping its code.
absl::Status Prefixed(std::string_view context, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrFormat("%s: %s", context, status.message()));
}

// ---------------------------------------------------------------------------------
// Files

// A regular file opened for reading; closed on destruction.
class InputFile {
 public:
  // Opens `path`; errors name it and carry the errno text with the code it implies.
  // O_NONBLOCK so that a FIFO is refused as not regular instead of blocking the open;
  // it changes nothing for regular files.
  static absl::StatusOr<InputFile> Open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrFormat("cannot open '%s'", path));
    InputFile file(fd, path);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrFormat("cannot stat '%s'", path));
    }
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a regular file", path));
    }
    file.size_ = static_cast<int64_t>(st.st_size);
    return file;
  }

  InputFile(InputFile&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), size_(other.size_) {}
  InputFile& operator=(InputFile&&) = delete;
  ~InputFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  int64_t size() const { return size_; }

  // Reads `length` bytes at `offset` into `dst`, retrying short reads and EINTR.
  absl::Status ReadAt(int64_t offset, size_t length, void* dst) const {
    auto* out = static_cast<char*>(dst);
    while (length > 0) {
      const ssize_t n = ::pread(fd_, out, length, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return absl::ErrnoToStatus(errno, absl::StrFormat("cannot read '%s'", path_));
      if (n == 0) {
        return absl::DataLossError(
            absl::StrFormat("'%s' ended at byte %d while being read", path_, offset));
      }
      out += n;
      offset += n;
      length -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

 private:
  InputFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_;
  std::string path_;
  int64_t size_ = 0;
};

// ---------------------------------------------------------------------------------
// External data

// What a tensor's external_data entries say.
struct ExternalData {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
};

absl::StatusOr<int64_t> ParseByteCount(const TensorProto& t, std::string_view key,
                                       const std::string& value) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: external_data %s '%s' is not a non-negative integer", Label(t), key, value));
  }
  return n;
}

// `location` must stay under the model's directory: relative, without a NUL, and not
// leaving it through "..". Symbolic links are followed as the file system has them.
absl::Status CheckLocation(const TensorProto& t, const std::string& location) {
  if (location.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: external_data location is empty", Label(t)));
  }
  if (location.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: external_data location contains a NUL byte", Label(t)));
  }
  const std::filesystem::path path(location);
  if (path.is_absolute() || path.has_root_path()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: external_data location '%s' is absolute: expected a path relative to the "
        "model's directory",
        Label(t), location));
  }
  const std::filesystem::path normal = path.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: external_data location '%s' leaves the model's directory", Label(t), location));
  }
  return absl::OkStatus();
}

absl::StatusOr<ExternalData> ParseExternalData(const TensorProto& t) {
  ExternalData data;
  std::vector<std::string_view> seen;
  for (const onnx::StringStringEntryProto& entry : t.external_data()) {
    const std::string& key = entry.key();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: external_data key '%s' given twice", Label(t), key));
    }
    seen.push_back(key);
    if (key == "location") {
      data.location = entry.value();
    } else if (key == "offset") {
      DYNVM_ASSIGN_OR_RETURN(data.offset, ParseByteCount(t, key, entry.value()));
    } else if (key == "length") {
      DYNVM_ASSIGN_OR_RETURN(data.length, ParseByteCount(t, key, entry.value()));
    } else if (key != "checksum") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unknown external_data key '%s': expected location, offset, length or checksum",
          Label(t), key));
    }
  }
  if (std::find(seen.begin(), seen.end(), "location") == seen.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: data_location is EXTERNAL but external_data has no location", Label(t)));
  }
  DYNVM_RETURN_IF_ERROR(CheckLocation(t, data.location));
  return data;
}

// An external data file opened and checked to hold the tensor's bytes at `offset`.
struct ExternalRange {
  InputFile file;
  int64_t offset;
};

// Opens `t`'s external data and checks that it is exactly `nbytes` bytes long, without
// reading it (so a bogus shape fails before anything is allocated).
absl::StatusOr<ExternalRange> OpenExternalData(const TensorProto& t, const std::string& base_dir,
                                               const std::string& type, uint64_t nbytes) {
  DYNVM_ASSIGN_OR_RETURN(const ExternalData data, ParseExternalData(t));
  const std::string path =
      base_dir.empty() ? data.location : (std::filesystem::path(base_dir) / data.location).string();
  absl::StatusOr<InputFile> file = InputFile::Open(path);
  if (!file.ok()) return Prefixed(absl::StrFormat("%s: external data", Label(t)), file.status());
  const int64_t size = file->size();
  if (data.offset > size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: external_data offset %d is past the end of '%s' (%d bytes)", Label(t),
                        data.offset, path, size));
  }
  const int64_t length = data.length.value_or(size - data.offset);
  if (length > size - data.offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: external_data offset %d + length %d runs past the end of '%s' (%d bytes)", Label(t),
        data.offset, length, path, size));
  }
  if (static_cast<uint64_t>(length) != nbytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: external data in '%s' has %d bytes, %s needs %d", Label(t), path,
                        length, type, nbytes));
  }
  return ExternalRange{*std::move(file), data.offset};
}

// ---------------------------------------------------------------------------------
// Data in the message

// The typed field ONNX stores `dtype`'s elements in.
std::string_view TypedFieldFor(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "float_data";
    case DType::kF64:
      return "double_data";
    case DType::kI64:
      return "int64_data";
    case DType::kU32:
    case DType::kU64:
      return "uint64_data";
    case DType::kString:
      return "string_data";
    default:
      return "int32_data";
  }
}

// The fields (and "external data") `t` holds elements in.
std::vector<std::string_view> DataSources(const TensorProto& t) {
  std::vector<std::string_view> sources;
  if (t.has_raw_data()) sources.push_back("raw_data");
  if (t.float_data_size() > 0) sources.push_back("float_data");
  if (t.int32_data_size() > 0) sources.push_back("int32_data");
  if (t.int64_data_size() > 0) sources.push_back("int64_data");
  if (t.double_data_size() > 0) sources.push_back("double_data");
  if (t.uint64_data_size() > 0) sources.push_back("uint64_data");
  if (t.string_data_size() > 0) sources.push_back("string_data");
  if (t.data_location() == TensorProto::EXTERNAL) sources.push_back("external data");
  return sources;
}

// The shape `t`'s dims give, checked.
absl::StatusOr<Shape> ShapeOf(const TensorProto& t) {
  if (t.dims_size() > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has rank %d: at most %d is supported",
                                                      Label(t), t.dims_size(), kMaxRank));
  }
  Shape shape(t.dims().begin(), t.dims().end());
  for (int i = 0; i < t.dims_size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: dim %d of %s is negative: expected sizes >= 0", Label(t), i, ShapeToString(shape)));
    }
  }
  return shape;
}

// The allowed range of int32_data values for `dtype` (an element type stored there).
std::pair<int64_t, int64_t> Int32DataRange(DType dtype) {
  switch (dtype) {
    case DType::kI8:
      return {std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max()};
    case DType::kI16:
      return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    case DType::kU8:
      return {0, std::numeric_limits<uint8_t>::max()};
    case DType::kBool:
      return {0, 1};
    case DType::kU16:
    case DType::kF16:
    case DType::kBF16:  // the uint16 bit pattern
      return {0, std::numeric_limits<uint16_t>::max()};
    default:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  }
}

// Copies int32_data into `array`, narrowing each checked value to the element type.
absl::Status CopyInt32Data(const TensorProto& t, const NDArray& array) {
  const auto [min, max] = Int32DataRange(array->dtype());
  const google::protobuf::RepeatedField<int32_t>& field = t.int32_data();
  for (int i = 0; i < field.size(); ++i) {
    if (field[i] < min || field[i] > max) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: int32_data[%d] = %d is out of range for %s: expected [%d, %d]",
                          Label(t), i, field[i], OnnxTypeName(t.data_type()), min, max));
    }
  }
  const size_t n = static_cast<size_t>(field.size());
  switch (DTypeSize(array->dtype())) {
    case 1:
      std::copy_n(field.data(), n, array->data_as<uint8_t>());  // in range: exact
      break;
    case 2:
      std::copy_n(field.data(), n, array->data_as<uint16_t>());
      break;
    default:
      std::copy_n(field.data(), n, array->data_as<int32_t>());
      break;
  }
  return absl::OkStatus();
}

// Copies uint64_data into the u32 tensor `array`, each value checked.
absl::Status CopyUint64DataToU32(const TensorProto& t, const NDArray& array) {
  const google::protobuf::RepeatedField<uint64_t>& field = t.uint64_data();
  uint32_t* out = array->data_as<uint32_t>();
  for (int i = 0; i < field.size(); ++i) {
    if (field[i] > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: uint64_data[%d] = %d is out of range for UINT32: expected [0, %d]",
                          Label(t), i, field[i], std::numeric_limits<uint32_t>::max()));
    }
    out[i] = static_cast<uint32_t>(field[i]);
  }
  return absl::OkStatus();
}

// The STRING tensor `t` of `shape` (`count` elements, data in `sources`): its elements
// are in string_data, one per element, and nowhere else.
absl::StatusOr<NDArray> StringTensorFromProto(const TensorProto& t, const Shape& shape,
                                              int64_t count,
                                              const std::vector<std::string_view>& sources) {
  if (!sources.empty() && (sources.size() > 1 || sources[0] != "string_data")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s of type STRING has %s: expected its elements in string_data", Label(t),
        absl::StrJoin(sources, " and ",
                      [](std::string* out, std::string_view s) { out->append(s); })));
  }
  if (t.string_data_size() != count) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: string_data has %d elements, STRING %s needs %d", Label(t),
                        t.string_data_size(), ShapeToString(shape), count));
  }
  const std::vector<std::string> values(t.string_data().begin(), t.string_data().end());
  return MakeStringTensor(shape, values, MakeNaiveAllocator());
}

// Makes every byte of the bool tensor `array` 0 or 1, as kernels assume; raw bytes may
// hold any non-zero value for true.
void NormaliseBools(const NDArray& array) {
  uint8_t* p = array->data_as<uint8_t>();
  for (size_t i = 0; i < array->nbytes(); ++i) p[i] = p[i] != 0;
}

// The number of elements the typed field `source` holds in `t`.
int64_t ElementsIn(const TensorProto& t, std::string_view source) {
  if (source == "float_data") return t.float_data_size();
  if (source == "int32_data") return t.int32_data_size();
  if (source == "int64_data") return t.int64_data_size();
  if (source == "double_data") return t.double_data_size();
  if (source == "uint64_data") return t.uint64_data_size();
  return 0;
}

// Copies the typed field `source` (the one for `array`'s dtype, with its element count
// checked) into `array`.
absl::Status CopyTypedData(const TensorProto& t, std::string_view source, const NDArray& array) {
  if (source == "int32_data") return CopyInt32Data(t, array);
  if (source == "uint64_data" && array->dtype() == DType::kU32) return CopyUint64DataToU32(t, array);
  const void* src = nullptr;
  if (source == "float_data") src = t.float_data().data();
  if (source == "int64_data") src = t.int64_data().data();
  if (source == "double_data") src = t.double_data().data();
  if (source == "uint64_data") src = t.uint64_data().data();
  std::memcpy(array->data(), src, array->nbytes());
  return absl::OkStatus();
}

// Copies the elements of `t` from `source` (whose size was checked; `external` is the
// open file when it is "external data") into `array`.
absl::Status Fill(const TensorProto& t, std::string_view source,
                  const std::optional<ExternalRange>& external, const NDArray& array) {
  if (source == "raw_data") {
    std::memcpy(array->data(), t.raw_data().data(), array->nbytes());
  } else if (external.has_value()) {
    const absl::Status read =
        external->file.ReadAt(external->offset, array->nbytes(), array->data());
    if (!read.ok()) return Prefixed(absl::StrFormat("%s: external data", Label(t)), read);
  } else {
    return CopyTypedData(t, source, array);
  }
  if (array->dtype() == DType::kBool) NormaliseBools(array);
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadProtoFile(const std::string& path, std::string_view kind,
                           google::protobuf::MessageLite& message) {
  DYNVM_ASSIGN_OR_RETURN(const InputFile file, InputFile::Open(path));
  if (file.size() > kMaxTensorProtoFileBytes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("'%s' has %d bytes: a %s file may have at most %d", path, file.size(),
                        kind, kMaxTensorProtoFileBytes));
  }
  std::string bytes(static_cast<size_t>(file.size()), '\0');
  DYNVM_RETURN_IF_ERROR(file.ReadAt(0, bytes.size(), bytes.data()));
  if (!message.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a serialized onnx %s: protobuf parsing failed", path, kind));
  }
  return absl::OkStatus();
}

absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.onnx == elem_type) return entry.dtype;
  }
  std::vector<std::string> supported;
  for (const DTypeEntry& entry : kDTypes) supported.push_back(OnnxTypeName(entry.onnx));
  // A type ONNX defines (COMPLEX64, FLOAT8...) is valid but unsupported; UNDEFINED or a
  // number ONNX does not define is invalid.
  const bool defined = elem_type != onnx::TensorProto::UNDEFINED &&
                       onnx::TensorProto::DataType_IsValid(elem_type);
  return absl::Status(
      defined ? absl::StatusCode::kUnimplemented : absl::StatusCode::kInvalidArgument,
      absl::StrFormat("unsupported ONNX element type %s (%d); supported: %s",
                      OnnxTypeName(elem_type), elem_type, absl::StrJoin(supported, ", ")));
}

absl::StatusOr<NDArray> TensorFromProto(const TensorProto& t, const std::string& base_dir) {
  if (t.has_segment()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is segment [%d, %d) of a larger tensor: segmented tensors are not supported", Label(t),
        t.segment().begin(), t.segment().end()));
  }
  absl::StatusOr<DType> dtype = DTypeFromOnnx(t.data_type());
  if (!dtype.ok()) return Prefixed(Label(t), dtype.status());
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, ShapeOf(t));
  absl::StatusOr<int64_t> count = ShapeNumElements(shape);
  if (!count.ok()) return Prefixed(Label(t), count.status());
  const std::string type =
      absl::StrFormat("%s %s", OnnxTypeName(t.data_type()), ShapeToString(shape));
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(*count), DTypeSize(*dtype), &nbytes) ||
      nbytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s has more than 2^63 bytes", Label(t), type));
  }
  if (t.data_location() != TensorProto::EXTERNAL && t.external_data_size() > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has external_data entries but data_location is not EXTERNAL", Label(t)));
  }

  // Which source, and that it holds exactly the tensor's bytes, before allocating.
  const std::vector<std::string_view> sources = DataSources(t);
  if (sources.size() > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has data in %s: expected exactly one source", Label(t),
        absl::StrJoin(sources, " and ",
                      [](std::string* out, std::string_view s) { out->append(s); })));
  }
  if (*dtype == DType::kString) return StringTensorFromProto(t, shape, *count, sources);
  const std::string_view typed = TypedFieldFor(*dtype);
  if (sources.empty()) {
    if (*count == 0) return NDArrayObj::Empty(shape, *dtype, MakeNaiveAllocator());
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s (%s) has no data: expected raw_data, %s or external data", Label(t), type, typed));
  }
  const std::string_view source = sources[0];
  std::optional<ExternalRange> external;
  if (source == "raw_data") {
    if (t.raw_data().size() != nbytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: raw_data has %d bytes, %s needs %d", Label(t), t.raw_data().size(), type, nbytes));
    }
  } else if (source == "external data") {
    absl::StatusOr<ExternalRange> opened = OpenExternalData(t, base_dir, type, nbytes);
    if (!opened.ok()) return opened.status();
    external.emplace(*std::move(opened));
  } else if (source != typed) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s of type %s has %s: expected its elements in %s or raw_data", Label(t),
                        OnnxTypeName(t.data_type()), source, typed));
  } else if (ElementsIn(t, source) != *count) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s has %d elements, %s needs %d",
                                                      Label(t), source, ElementsIn(t, source), type,
                                                      *count));
  }

  DYNVM_ASSIGN_OR_RETURN(NDArray array, NDArrayObj::Empty(shape, *dtype, MakeNaiveAllocator()));
  if (nbytes > 0) DYNVM_RETURN_IF_ERROR(Fill(t, source, external, array));
  return array;
}

absl::StatusOr<NDArray> ReadTensorProtoFile(const std::string& path,
                                            std::optional<int32_t> declared_elem_type) {
  TensorProto t;
  DYNVM_RETURN_IF_ERROR(ReadProtoFile(path, "TensorProto", t));
  // Both types keep their elements in int32_data or as 2-byte raw_data.
  if (declared_elem_type == TensorProto::BFLOAT16 && t.data_type() == TensorProto::UINT16) {
    t.set_data_type(TensorProto::BFLOAT16);
  }
  absl::StatusOr<NDArray> array =
      TensorFromProto(t, std::filesystem::path(path).parent_path().string());
  if (!array.ok()) return Prefixed(path, array.status());
  return array;
}


}  // namespace dynvm::compiler::onnx_frontend
