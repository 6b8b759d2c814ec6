// Checks of the errors a call throws, shared by the tests: its type and what its message says.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace feedline::testing {

// Runs `f` and checks that it throws an E whose message holds every one of `needles`.
template <typename E>
void expect_error(const std::function<void()>& f, const std::vector<std::string>& needles) {
  std::string message = "(no error)";
  try {
    f();
  } catch (const E& e) {
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("another exception: ") + e.what();
  }
  for (const std::string& needle : needles) {
    EXPECT_NE(message.find(needle), std::string::npos) << "wanted \"" << needle << "\", got: " << message;
  }
}

// The same for one needle (a string; a braced list goes to the overload above).
template <typename E, typename Needle>
void expect_error(const std::function<void()>& f, const Needle& needle) {
  expect_error<E>(f, std::vector<std::string>{std::string(needle)});
}

}  // namespace feedline::testing
