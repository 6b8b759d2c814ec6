// feedline's one error model: exceptions derived from feedline::Error, thrown where a problem is detected.
// Messages name the file and, where known, the column and byte offset. The library never prints or exits. An error
// thrown on a worker thread or one of the library's parallel loops reaches the caller with its type and message.
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

// The operating system refused: missing file, permission, disk full. code() is the errno that said so (ENOENT,
// EACCES, ENOSPC, ...) where one did, else 0.
class IoError : public Error {
 public:
  explicit IoError(const std::string& what, int code = 0) : Error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_ = 0;
};

// A caller passed a value outside the accepted range.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A value of one of an options struct's fields that cannot work: option() is the field's name as the struct spells
// it ("level", "image_shape"), detail() what is wrong with the value ("23: zstd's levels are 1 to 22"), and what()
// the two together. A front end that took the value under a name of its own (a command-line flag, a keyword
// argument) says detail() after that name.
class OptionError : public InvalidArgument {
 public:
  OptionError(const std::string& option, const std::string& detail)
      : InvalidArgument(option + " " + detail), option_(option), detail_(detail) {}
  const std::string& option() const { return option_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string option_, detail_;
};

}  // namespace feedline
