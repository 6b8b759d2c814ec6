// Which device a job or a benchmark runs on, as a front end reads it once from its text ("auto", "cpu", "cuda",
// "cuda:N"). No LibTorch here, so that a command line can be parsed before LibTorch is loaded; what the choice
// becomes on this machine (auto: a GPU when there is one) is decided where LibTorch is, by the code that runs.
#pragma once

#include <string>

#include "feedline/io/error.h"

namespace feedline {

struct DeviceChoice {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;
  // kCuda: the GPU's number; -1: no number given (a rank of a job takes its local GPU, one process the default).
  int index = -1;
};

inline bool operator==(const DeviceChoice& a, const DeviceChoice& b) { return a.kind == b.kind && a.index == b.index; }
inline bool operator!=(const DeviceChoice& a, const DeviceChoice& b) { return !(a == b); }

// Reads "auto", "cpu", "cuda" or "cuda:N" (N a number from 0). Throws InvalidArgument, quoting the text, for
// anything else.
inline DeviceChoice parse_device_choice(const std::string& text) {
  if (text == "auto") return {DeviceChoice::Kind::kAuto, -1};
  if (text == "cpu") return {DeviceChoice::Kind::kCpu, -1};
  if (text == "cuda") return {DeviceChoice::Kind::kCuda, -1};
  const std::string prefix = "cuda:";
  const std::string number = text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : "";
  // Four digits: more GPUs than any machine has, and no overflow below.
  bool digits = !number.empty() && number.size() <= 4;
  for (const char c : number) digits = digits && c >= '0' && c <= '9';
  if (!digits) throw InvalidArgument("'" + text + "' is not a device: auto, cpu, cuda or cuda:N");
  return {DeviceChoice::Kind::kCuda, std::stoi(number)};
}

// The text parse_device_choice() reads back: "auto", "cpu", "cuda", "cuda:1".
inline std::string device_choice_text(const DeviceChoice& d) {
  switch (d.kind) {
    case DeviceChoice::Kind::kAuto:
      return "auto";
    case DeviceChoice::Kind::kCpu:
      return "cpu";
    case DeviceChoice::Kind::kCuda:
      break;
  }
  return d.index < 0 ? "cuda" : "cuda:" + std::to_string(d.index);
}

}  // namespace feedline
