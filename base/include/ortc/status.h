// ortc's single error type, shared by the compiler and the runtime.
// A Status is a code (named after ONNX Runtime's) plus a message; context is prepended as the
// error travels up, so the final text reads "outer: inner: root cause".
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ortc {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNoSuchFile,
  kInvalidGraph,
  kNotImplemented,
  kEpFail,
  kModelRequiresCompilation,
  kIoError,
  kOutOfMemory,  // an allocation failed: the model or its inputs need more memory than there is
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message starts with `context: `.
  Status WithContext(std::string_view context) const;
  // "INVALID_GRAPH: message"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NoSuchFile(std::string m) {
  return {StatusCode::kNoSuchFile, std::move(m)};
}
inline Status InvalidGraph(std::string m) {
  return {StatusCode::kInvalidGraph, std::move(m)};
}
inline Status NotImplemented(std::string m) {
  return {StatusCode::kNotImplemented, std::move(m)};
}
inline Status IoError(std::string m) {
  return {StatusCode::kIoError, std::move(m)};
}
inline Status OutOfMemory(std::string m) {
  return {StatusCode::kOutOfMemory, std::move(m)};
}

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ortc

// Returns the error of `expr` (a Status) from the enclosing function, adding `context`.
#define ORTC_RETURN_IF_ERROR_CTX(expr, context)             \
  do {                                                      \
    ::ortc::Status _ortc_s = (expr);                        \
    if (!_ortc_s.ok()) return _ortc_s.WithContext(context); \
  } while (0)

#define ORTC_RETURN_IF_ERROR(expr)     \
  do {                                 \
    ::ortc::Status _ortc_s = (expr);   \
    if (!_ortc_s.ok()) return _ortc_s; \
  } while (0)
