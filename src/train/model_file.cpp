// Saving and loading a module's weights, in LibTorch's format, with feedline's file discipline and errors.
#include <torch/serialize.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/train/models.h"

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
  // LibTorch's Module::load gives each tensor the file's shape, whatever the module's was: keep the old tensors
  // (views of their storage, no copies) to compare with, and to put back when the layouts differ.
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& p : module.named_parameters()) tensors.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) tensors.emplace_back(b.key(), b.value());
  std::vector<torch::Tensor> before;
  for (const auto& t : tensors) before.push_back(t.second.detach());
  const auto restore = [&] {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < tensors.size(); ++i) tensors[i].second.set_data(before[i]);
  };
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
    module.load(archive);
  } catch (const c10::Error& e) {
    restore();
    // LibTorch's message is several lines (a zip reader's or a missing key's); its first line says which.
    std::string why = e.what_without_backtrace();
    why = why.substr(0, why.find('\n'));
    throw InvalidFile(path + ": not a saved model of this layout (" + why + ")");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].second.sizes() != before[i].sizes()) {
      std::ostringstream why;
      why << tensors[i].first << " is " << tensors[i].second.sizes() << " in the file, " << before[i].sizes()
          << " here";
      restore();
      throw InvalidFile(path + ": not a saved model of this layout (" + why.str() + ")");
    }
  }
}

}  // namespace feedline
