#include "onnx/tensor_io.h"

#include <unistd.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/file_io.h"
#include "core/messages.h"
#include "onnx/onnx_pb.h"

namespace tessel::onnx_io {

namespace fs = std::filesystem;

StatusOr<DType> DTypeFromOnnx(int32_t onnx_type, const std::string& what) {
  using TP = onnx::TensorProto;
  switch (onnx_type) {
    case TP::FLOAT:
      return DType::kFloat32;
    case TP::UINT8:
      return DType::kUInt8;
    case TP::INT8:
      return DType::kInt8;
    case TP::UINT16:
      return DType::kUInt16;
    case TP::INT16:
      return DType::kInt16;
    case TP::INT32:
      return DType::kInt32;
    case TP::INT64:
      return DType::kInt64;
    case TP::BOOL:
      return DType::kBool;
    case TP::FLOAT16:
      return DType::kFloat16;
    case TP::DOUBLE:
      return DType::kFloat64;
    case TP::UINT32:
      return DType::kUInt32;
    case TP::UINT64:
      return DType::kUInt64;
    case TP::BFLOAT16:
      return DType::kBFloat16;
    case TP::STRING:
      return Unsupported(what + " has dtype string; tessel supports numeric tensors only");
    case TP::COMPLEX64:
    case TP::COMPLEX128:
      return Unsupported(what + " has a complex dtype; not supported");
    default: {
      // The narrow types of ONNX 1.14 and later (onnx.proto's numbering):
      // valid models, types tessel does not compute in.
      static constexpr const char* kNarrow[] = {"FLOAT8E4M3FN",   "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                                "FLOAT8E5M2FNUZ", "UINT4",          "INT4",
                                                "FLOAT4E2M1",     "FLOAT8E8M0",     "UINT2",
                                                "INT2",           "FLOAT6E2M3",     "FLOAT6E3M2"};
      if (onnx_type >= 17 && onnx_type < 17 + static_cast<int32_t>(std::size(kNarrow))) {
        return Unsupported(what + " has dtype " + kNarrow[onnx_type - 17] +
                           "; tessel does not support it");
      }
      return InvalidArgument(what + " has unknown ONNX data type " + std::to_string(onnx_type));
    }
  }
}

int32_t DTypeToOnnx(DType t) {
  using TP = onnx::TensorProto;
  switch (t) {
    case DType::kFloat32:
      return TP::FLOAT;
    case DType::kFloat16:
      return TP::FLOAT16;
    case DType::kBFloat16:
      return TP::BFLOAT16;
    case DType::kFloat64:
      return TP::DOUBLE;
    case DType::kInt8:
      return TP::INT8;
    case DType::kInt16:
      return TP::INT16;
    case DType::kInt32:
      return TP::INT32;
    case DType::kInt64:
      return TP::INT64;
    case DType::kUInt8:
      return TP::UINT8;
    case DType::kUInt16:
      return TP::UINT16;
    case DType::kUInt32:
      return TP::UINT32;
    case DType::kUInt64:
      return TP::UINT64;
    case DType::kBool:
      return TP::BOOL;
    case DType::kUndefined:
      break;
  }
  return TP::UNDEFINED;
}

namespace {

Status CountMismatch(const std::string& what, int64_t have, int64_t want) {
  return DataLoss(what + " holds " + std::to_string(have) + " elements; its shape needs " +
                  std::to_string(want));
}

// Copies typed-field values into the tensor, converting to its element type.
template <typename Field>
Status CopyTyped(const Field& field, Tensor& t, const std::string& what) {
  const int64_t n = t.num_elements();
  if (static_cast<int64_t>(field.size()) != n) return CountMismatch(what, field.size(), n);
  DispatchDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(t.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        // int32_data carries the raw 16 bits.
        out[i] = T{static_cast<uint16_t>(field.Get(static_cast<int>(i)))};
      } else {
        out[i] = static_cast<T>(field.Get(static_cast<int>(i)));
      }
    }
  });
  return Status::Ok();
}

// A non-negative decimal integer, all of `text`.
bool ParseCount(const std::string& text, int64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && *out >= 0;
}

// The external data file of `what` (an initializer, a tensor attribute),
// only if it lies inside `base_dir` (the model's folder): no absolute
// location, no ".." component, no link that resolves outside it (the bug
// class of CVE-2024-27318), and a regular file.
StatusOr<fs::path> ExternalDataPath(const std::string& location, const fs::path& base_dir,
                                    const std::string& what) {
  const std::string quoted = "'" + EscapeForMessage(location) + "'";
  if (location.empty()) return InvalidArgument(what + ": external data without a location");
  if (location.find('\0') != std::string::npos || location.find('\\') != std::string::npos) {
    return InvalidArgument(what + ": external data location " + quoted +
                           " has a NUL or a backslash");
  }
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_path()) {
    return InvalidArgument(what + ": external data location " + quoted +
                           " is absolute; it must be a path inside the model's folder");
  }
  for (const fs::path& part : rel) {
    if (part == "..") {
      return InvalidArgument(what + ": external data location " + quoted +
                             " leaves the model's folder (..)");
    }
  }
  std::error_code ec;
  const fs::path dir = fs::canonical(base_dir.empty() ? fs::path(".") : base_dir, ec);
  if (ec) return NotFound(what + ": the model's folder cannot be resolved: " + ec.message());
  const fs::path file = fs::weakly_canonical(dir / rel, ec);
  if (ec) return NotFound(what + ": external data file " + quoted + " cannot be resolved");
  // Inside `dir`, component by component, once every link is resolved.
  auto f = file.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
    if (f == file.end() || *f != *d) {
      return InvalidArgument(what + ": external data location " + quoted +
                             " resolves outside the model's folder (a symbolic link)");
    }
  }
  if (!fs::exists(file, ec)) {
    return NotFound(what + ": external data file " + quoted + " not found");
  }
  if (!fs::is_regular_file(file, ec)) {
    return InvalidArgument(what + ": external data location " + quoted + " is not a regular file");
  }
  return file;
}

// The external_data entries of `proto`: where, from which byte, how many
// (-1: as many as the tensor has).
struct ExternalData {
  std::string location;
  int64_t offset = 0, length = -1;
};

StatusOr<ExternalData> ParseExternalData(const onnx::TensorProto& proto, const std::string& what) {
  ExternalData e;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") e.location = kv.value();
    if ((kv.key() == "offset" && !ParseCount(kv.value(), &e.offset)) ||
        (kv.key() == "length" && !ParseCount(kv.value(), &e.length))) {
      return InvalidArgument(what + ": external data " + kv.key() + " '" +
                             EscapeForMessage(kv.value()) + "' is not a byte count");
    }
  }
  return e;
}

Status ReadExternal(const onnx::TensorProto& proto, const fs::path& base_dir, Tensor& t,
                    const std::string& what) {
  TESSEL_ASSIGN_OR_RETURN(const ExternalData e, ParseExternalData(proto, what));
  const std::string& location = e.location;
  const int64_t offset = e.offset, length = e.length;
  TESSEL_ASSIGN_OR_RETURN(const fs::path file, ExternalDataPath(location, base_dir, what));
  const std::string quoted = "'" + EscapeForMessage(location) + "'";
  const int64_t want = static_cast<int64_t>(t.size_bytes());
  if (length >= 0 && length != want) {
    return DataLoss(what + ": external data length " + std::to_string(length) +
                    " does not match its shape (" + std::to_string(want) + " bytes)");
  }
  std::error_code ec;
  const auto size = static_cast<int64_t>(fs::file_size(file, ec));
  if (ec) return NotFound(what + ": external data file " + quoted + " cannot be read");
  // offset + want <= size, without overflow: both are non-negative.
  if (offset > size || want > size - offset) {
    return DataLoss(what + ": external data file " + quoted + " has " + std::to_string(size) +
                    " bytes; the tensor needs " + std::to_string(want) + " from offset " +
                    std::to_string(offset));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFound(what + ": external data file " + quoted + " cannot be opened");
  in.seekg(offset);
  in.read(static_cast<char*>(t.raw_data()), want);
  if (in.gcount() != want) {
    return DataLoss(what + ": external data file " + quoted + " is too short");
  }
  return Status::Ok();
}

}  // namespace

Status CheckExternalData(const onnx::TensorProto& proto, const fs::path& base_dir,
                         const std::string& what) {
  TESSEL_ASSIGN_OR_RETURN(const ExternalData e, ParseExternalData(proto, what));
  return ExternalDataPath(e.location, base_dir, what).status();
}

StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const fs::path& base_dir,
                                 const std::string& what) {
  TESSEL_ASSIGN_OR_RETURN(DType dtype, DTypeFromOnnx(proto.data_type(), what));
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument(what + " has negative dimension " + std::to_string(d));
  }
  // Nothing is allocated before the bytes that fill it are known to exist:
  // a corrupt or hostile file may claim any shape.
  int64_t bytes = 0, extent = 0;
  if (!CheckedByteSize(shape, dtype, &bytes, &extent) || extent > (int64_t{1} << 40)) {
    return DataLoss(what + " has an absurd shape " + ShapeToString(shape));
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    TESSEL_RETURN_IF_ERROR(CheckExternalData(proto, base_dir, what));
    Tensor t(dtype, shape);
    TESSEL_RETURN_IF_ERROR(ReadExternal(proto, base_dir, t, what));
    return t;
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != bytes) {
      return DataLoss(what + " has " + std::to_string(raw.size()) + " bytes of raw data; shape " +
                      ShapeToString(shape) + " of " + DTypeName(dtype) + " needs " +
                      std::to_string(bytes));
    }
    Tensor t(dtype, shape);
    if (!raw.empty()) std::memcpy(t.raw_data(), raw.data(), raw.size());
    return t;
  }
  const int64_t n = bytes / static_cast<int64_t>(DTypeSize(dtype));
  int64_t given = 0;
  switch (dtype) {
    case DType::kFloat32:
      given = proto.float_data_size();
      break;
    case DType::kFloat64:
      given = proto.double_data_size();
      break;
    case DType::kInt64:
      given = proto.int64_data_size();
      break;
    case DType::kUInt32:
    case DType::kUInt64:
      given = proto.uint64_data_size();
      break;
    default:
      given = proto.int32_data_size();
      break;
  }
  if (given != n) return CountMismatch(what, given, n);
  Tensor t(dtype, shape);
  switch (dtype) {
    case DType::kFloat32:
      TESSEL_RETURN_IF_ERROR(CopyTyped(proto.float_data(), t, what));
      break;
    case DType::kFloat64:
      TESSEL_RETURN_IF_ERROR(CopyTyped(proto.double_data(), t, what));
      break;
    case DType::kInt64:
      TESSEL_RETURN_IF_ERROR(CopyTyped(proto.int64_data(), t, what));
      break;
    case DType::kUInt32:
    case DType::kUInt64:
      TESSEL_RETURN_IF_ERROR(CopyTyped(proto.uint64_data(), t, what));
      break;
    default:
      TESSEL_RETURN_IF_ERROR(CopyTyped(proto.int32_data(), t, what));
      break;
  }
  return t;
}

void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(DTypeToOnnx(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  proto->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.size_bytes()));
}

StatusOr<Tensor> ReadTensorFile(const fs::path& path, std::string* name) {
  TESSEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return DataLoss("'" + path.string() + "' is not a serialized ONNX TensorProto");
  }
  if (name) *name = proto.name();
  return TensorFromProto(proto, path.parent_path(), "tensor file '" + path.string() + "'");
}

Status WriteTensorFile(const fs::path& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  TensorToProto(t, name, &proto);
  return WriteFileAtomically(path, proto.SerializeAsString());
}

}  // namespace tessel::onnx_io
