// Saving and loading a module's weights, in LibTorch's format, with feedline's file discipline and errors.
#include <torch/serialize.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "feedline/error.h"
#include "feedline/file.h"
#include "feedline/model.h"

namespace feedline {

void save_module(const torch::nn::Module& module, const std::string& path) {
  torch::serialize::OutputArchive archive;
  module.save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  AtomicFile file(path);
  file.write(bytes.str());
  file.commit();
}

void load_module(torch::nn::Module& module, const std::string& path, const torch::Device& device) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw IoError(path + ": not found (no saved model there)");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
    module.load(archive);
  } catch (const c10::Error& e) {
    // LibTorch's message is several lines (a zip reader's or a missing key's); its first line says which.
    std::string why = e.what_without_backtrace();
    why = why.substr(0, why.find('\n'));
    throw InvalidFile(path + ": not a saved model of this layout (" + why + ")");
  }
}

}  // namespace feedline
