// Status and StatusOr<T>: the error currency across module boundaries.
//
// The codes say what the caller should do:
//   kUnavailable        transient (network, busy store): retry with backoff.
//   kDeadlineExceeded   the operation ran out of time: retry if the budget allows.
//   kAlreadyExists      a conflict (e.g. a second writer for the same sequence): do not retry.
//   kFailedPrecondition the system is not in a state for this: do not retry as is.
//   kInvalidArgument    the input is malformed or violates the schema: fix the input.
//   kNotFound           the thing asked for does not exist.
//   kDataLoss           stored data is corrupted (hash mismatch, unparsable document).
//   kResourceExhausted  a limit was hit (body size, rate).
//   kPermissionDenied / kUnauthenticated  credentials.
//   kInternal           a bug or an unexpected library failure.
// Status is a value type; copying is cheap when ok. Not thread-safe to mutate concurrently.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace agentckpt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kUnavailable,
  kDeadlineExceeded,
  kDataLoss,
  kResourceExhausted,
  kPermissionDenied,
  kUnauthenticated,
  kInternal,
};

// Returns the upper-snake name of a code, e.g. "DATA_LOSS".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "DATA_LOSS: hash mismatch" or "OK".
  std::string ToString() const;
  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status DataLossError(std::string message);
Status ResourceExhaustedError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnauthenticatedError(std::string message);
Status InternalError(std::string message);

// Holds either a value or a non-ok Status. Accessing value() of a non-ok StatusOr is a
// broken invariant and aborts (see docs/crash-policy.md).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) { CheckNotOk(); }  // NOLINT
  StatusOr(Status&& status) : status_(std::move(status)) { CheckNotOk(); }  // NOLINT
  StatusOr(const T& value) : value_(value) {}  // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const T& value() const& { CheckOk(); return *value_; }
  T& value() & { CheckOk(); return *value_; }
  T&& value() && { CheckOk(); return std::move(*value_); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  void CheckNotOk() const;
  void CheckOk() const;
  Status status_;
  std::optional<T> value_;
};

[[noreturn]] void StatusOrAbort(const char* what, const Status& status);

template <typename T>
void StatusOr<T>::CheckNotOk() const {
  if (status_.ok()) StatusOrAbort("StatusOr constructed from an OK status", status_);
}
template <typename T>
void StatusOr<T>::CheckOk() const {
  if (!status_.ok()) StatusOrAbort("value() of a non-OK StatusOr", status_);
}

}  // namespace agentckpt
