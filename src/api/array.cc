// tessel::Error, element types and Array (include/tessel/tessel.h).
#include <cstring>

#include "api/bridge.h"
#include "core/messages.h"
#include "ir/dtype.h"

namespace tessel {

const char* Version() { return TESSEL_VERSION_STRING; }

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kTypeMismatch:
      return "type mismatch";
    case ErrorCode::kShapeMismatch:
      return "shape mismatch";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kCorruptFile:
      return "corrupt file";
    case ErrorCode::kResourceExhausted:
      return "resource exhausted";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

// One line whatever the message quotes (a path or a name with a line break
// or a NUL from the caller): folded and escaped as the CLI's are.
Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(OneLine(message)), code_(code) {}

// The public numbering is DType's, so that conversions are casts; checked.
static_assert(static_cast<int>(ElementType::kFloat32) == static_cast<int>(DType::kFloat32));
static_assert(static_cast<int>(ElementType::kBool) == static_cast<int>(DType::kBool));
static_assert(static_cast<int>(ElementType::kUInt64) == static_cast<int>(DType::kUInt64));
static_assert(static_cast<int>(ElementType::kInt8) == static_cast<int>(DType::kInt8));

namespace {

bool Valid(ElementType type) {
  const int t = static_cast<int>(type);
  return t >= static_cast<int>(ElementType::kFloat32) && t <= static_cast<int>(ElementType::kBool);
}

void CheckElementType(ElementType type, const char* where) {
  if (!Valid(type)) {
    throw Error(ErrorCode::kInvalidArgument, std::string(where) + ": element type " +
                                                 std::to_string(static_cast<int>(type)) +
                                                 " is not one of tessel::ElementType");
  }
}

// The shape's byte size; InvalidArgument naming `where` when a dimension is
// negative or the size overflows.
int64_t CheckedBytes(ElementType type, const std::vector<int64_t>& shape, const char* where) {
  CheckElementType(type, where);
  int64_t bytes = 0;
  if (!CheckedByteSize(shape, static_cast<DType>(type), &bytes)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(where) + ": shape " + ShapeToString(shape) +
                    " has a negative dimension or a size that does not fit in 64 bits");
  }
  return bytes;
}

}  // namespace

const char* ElementTypeName(ElementType type) {
  return Valid(type) ? DTypeName(static_cast<DType>(type)) : "undefined";
}

size_t ElementSize(ElementType type) {
  return Valid(type) ? DTypeSize(static_cast<DType>(type)) : 0;
}

Array Array::Allocate(ElementType type, std::vector<int64_t> shape) {
  CheckedBytes(type, shape, "Array::Allocate");
  return api::ArrayOf(Tensor(static_cast<DType>(type), std::move(shape)));
}

Array Array::Borrow(ElementType type, std::vector<int64_t> shape, void* data) {
  return Share(type, std::move(shape), data, nullptr);
}

Array Array::Share(ElementType type, std::vector<int64_t> shape, void* data,
                   std::shared_ptr<void> owner) {
  const int64_t bytes = CheckedBytes(type, shape, "Array::Borrow");
  if (data == nullptr && bytes > 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "Array::Borrow: null data for a shape of " + std::to_string(bytes) + " bytes");
  }
  Array a;
  a.type_ = type;
  a.shape_ = std::move(shape);
  a.data_ = data;
  a.owner_ = std::move(owner);
  return a;
}

int64_t Array::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

void Array::CheckType(ElementType wanted) const {
  if (wanted != type_) {
    throw Error(ErrorCode::kTypeMismatch, std::string("Array::data<") + ElementTypeName(wanted) +
                                              ">() of an array of " + ElementTypeName(type_));
  }
}

namespace api {

[[noreturn]] void Throw(const Status& status) {
  ErrorCode code = ErrorCode::kInternal;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      code = ErrorCode::kInvalidArgument;
      break;
    case StatusCode::kUnsupported:
      code = ErrorCode::kUnsupported;
      break;
    case StatusCode::kNotFound:
      code = ErrorCode::kNotFound;
      break;
    case StatusCode::kDataLoss:
      code = ErrorCode::kCorruptFile;
      break;
    case StatusCode::kResourceExhausted:
      code = ErrorCode::kResourceExhausted;
      break;
    case StatusCode::kOk:
    case StatusCode::kInternal:
      code = ErrorCode::kInternal;
      break;
  }
  throw Error(code, status.message());
}

ElementType ToElementType(DType dtype) { return static_cast<ElementType>(dtype); }
DType ToDType(ElementType type) { return static_cast<DType>(type); }

TensorInfo InfoOf(const ir::Value& value) {
  return {value.name, ToElementType(value.dtype), value.shape};
}

Tensor ViewOf(const Array& array) {
  // The array's copy keeps its elements alive as long as the tensor.
  auto keep = std::make_shared<Array>(array);
  return Tensor::View(ToDType(array.type()), array.shape(), const_cast<void*>(array.raw_data()),
                      keep);
}

Array ArrayOf(Tensor tensor) {
  auto keep = std::make_shared<Tensor>(std::move(tensor));
  return Array::Share(ToElementType(keep->dtype()), keep->shape(), keep->raw_data(), keep);
}

}  // namespace api
}  // namespace tessel
