// feedline's one error model: exceptions derived from feedline::Error, thrown where a problem is detected.
// Messages name the file and, where known, the column and byte offset. The library never prints or exits (the lab,
// whose job is to print its tables, aside). An error thrown on a worker or parallel_for thread reaches the caller
// with its type and message.
#pragma once

#include <stdexcept>
#include <string>

namespace feedline {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file that is not what it claims to be: bad magic, truncated, corrupt or hostile contents.
class InvalidFile : public Error {
 public:
  using Error::Error;
};

// A valid input that uses a feature feedline does not implement.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// The operating system refused: missing file, permission, disk full.
class IoError : public Error {
 public:
  using Error::Error;
};

// A caller passed a value outside the accepted range.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

}  // namespace feedline
