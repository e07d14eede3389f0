// Errors as values: every fallible call returns a Status or a Result<T> carrying a message that
// says what was wrong and where. Nothing on a hot path throws.
#pragma once

#include <fmt/format.h>

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace infer {

/// An error: a human-readable message naming what was wrong and where (layer, blob, expected vs
/// got).
struct Error {
  std::string message;
};

/// Builds an Error from a fmt format string.
template <class... Args>
[[nodiscard]] Error make_error(fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...)};
}

/// A value or an Error (std::expected is C++23; this is the subset we need).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }
  const std::string& message() const { return error().message; }

 private:
  std::variant<T, Error> v_;
};

/// Success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit by design

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }
  const std::string& message() const { return error_.message; }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Result<void>;

/// Propagates a failed Status/Result from the enclosing function.
#define INFER_TRY(...)                                                   \
  do {                                                                   \
    if (auto&& infer_try_status_ = (__VA_ARGS__); !infer_try_status_.ok()) \
      return infer_try_status_.error();                                  \
  } while (0)

}  // namespace infer
