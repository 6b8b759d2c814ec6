// FEEDLINE_ARG: an option with a chainable setter and a getter, for feedline's options structs (LoaderOptions,
// SimpleCNNOptions), as LibTorch's TORCH_ARG does.
#pragma once

#define FEEDLINE_ARG(T, name)                     \
 public:                                          \
  auto name(const T& new_##name)->decltype(*this) { \
    this->name##_ = new_##name;                   \
    return *this;                                 \
  }                                               \
  const T& name() const noexcept { return this->name##_; } \
                                                  \
 private:                                         \
  T name##_

