// Status and StatusOr: the channel for bad user input.
//
// Everything a user can get wrong (a malformed model, an unsupported op, a bad
// option, a wrong input shape) comes back as a Status with one line that names
// the culprit. Internal invariants use TESSEL_CHECK instead (core/check.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tessel {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the user's input is wrong (model, option, tensor)
  kUnsupported,        // valid input that tessel does not handle
  kNotFound,           // a file or a name that does not exist
  kDataLoss,           // a truncated or corrupt file
  kResourceExhausted,  // a pool or limit too small
  kInternal,           // an I/O failure or other environment problem
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prepends context: "while importing 'x': " + message.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tessel

#define TESSEL_CONCAT_INNER_(a, b) a##b
#define TESSEL_CONCAT_(a, b) TESSEL_CONCAT_INNER_(a, b)

#define TESSEL_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::tessel::Status tessel_status_ = (expr);        \
    if (!tessel_status_.ok()) return tessel_status_; \
  } while (0)

#define TESSEL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#define TESSEL_ASSIGN_OR_RETURN(lhs, expr) \
  TESSEL_ASSIGN_OR_RETURN_IMPL_(TESSEL_CONCAT_(tessel_statusor_, __LINE__), lhs, expr)
