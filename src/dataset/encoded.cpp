#include "feedline/dataset/encoded.h"

#include <exception>
#include <string>
#include <utility>

#include "feedline/io/error.h"

namespace feedline {
namespace {

// `message` with `name: ` before it, unless it already starts so (the decoders name the sample they were given).
std::string naming(const std::string& name, const std::string& message) {
  const std::string prefix = name + ": ";
  return message.compare(0, prefix.size(), prefix) == 0 ? message : prefix + message;
}

// Rethrows the exception in flight with `name: ` before its message (see naming()), keeping feedline's error types
// (an IoError its code) so that a caller can still tell a corrupt file from a missing one.
[[noreturn]] void rethrow_naming(const std::string& name) {
  const auto named = [&name](const std::exception& e) { return naming(name, e.what()); };
  try {
    throw;
  } catch (const InvalidFile& e) {
    throw InvalidFile(named(e));
  } catch (const Unsupported& e) {
    throw Unsupported(named(e));
  } catch (const IoError& e) {
    throw IoError(named(e), e.code());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(named(e));
  } catch (const std::exception& e) {
    throw Error(named(e));
  } catch (...) {
    throw Error(name + ": the transform threw something other than an exception");
  }
}

}  // namespace

std::vector<int64_t> SampleSource::labels() const {
  std::vector<int64_t> out(static_cast<size_t>(size()));
  for (int64_t i = 0; i < size(); ++i) out[static_cast<size_t>(i)] = get(i).label;
  return out;
}

EncodedDataset::EncodedDataset(std::shared_ptr<const SampleSource> source,
                               std::shared_ptr<const SampleTransform> transform, OnError on_error)
    : source_(std::move(source)), transform_(std::move(transform)), on_error_(on_error) {
  if (!source_) throw InvalidArgument("EncodedDataset: no sample source");
  if (!transform_) throw InvalidArgument("EncodedDataset: no sample transform");
  for (const int64_t size : transform_->layout().sizes) {
    if (size < 0) throw InvalidArgument("EncodedDataset: the transform's layout has a negative size");
  }
}

OnError parse_on_error(const std::string& name) {
  if (name == "raise") return OnError::kRaise;
  if (name == "skip") return OnError::kSkip;
  throw InvalidArgument("on_error must be \"raise\" or \"skip\", got \"" + name + "\"");
}

// A sample that cannot be made raises here whatever on_error says: there is no batch to leave it out of.
Example EncodedDataset::get(int64_t index) const {
  Example batch = make(std::vector<int64_t>{index}, BatchContext{}, OnError::kRaise);
  return {batch.data[0], batch.target[0]};
}

Example EncodedDataset::get_batch(const std::vector<int64_t>& indices) const {
  return make_batch(indices, BatchContext{});
}

Example EncodedDataset::make_batch(const std::vector<int64_t>& indices, const BatchContext& context) const {
  return make(indices, context, on_error_);
}

Example EncodedDataset::make(const std::vector<int64_t>& indices, const BatchContext& context,
                             OnError on_error) const {
  const SampleLayout layout = transform_->layout();
  const auto n = static_cast<int64_t>(indices.size());
  std::vector<int64_t> sizes{n};
  sizes.insert(sizes.end(), layout.sizes.begin(), layout.sizes.end());
  // Allocated once, page-locked when the loader pins: the samples are written where they will be copied from.
  const auto options = torch::TensorOptions().pinned_memory(context.pinned);
  Example batch{torch::empty(sizes, options.dtype(layout.dtype)), torch::empty({n}, options.dtype(torch::kInt64))};
  int64_t* labels = batch.target.data_ptr<int64_t>();
  const int64_t count = size();
  int64_t kept = 0;  // samples written so far, in slots 0..kept-1
  for (int64_t i = 0; i < n; ++i) {
    const int64_t index = indices[static_cast<size_t>(i)];
    if (index < 0 || index >= count) {
      throw InvalidArgument("EncodedDataset: index " + std::to_string(index) + " outside 0.." +
                            std::to_string(count - 1));
    }
    EncodedSample sample;
    try {
      sample = source_->get(index);
    } catch (const Error& e) {
      if (on_error != OnError::kSkip) throw;
      skip("sample " + std::to_string(index), e.what());
      continue;
    }
    const std::string name = sample.name.empty() ? "sample " + std::to_string(index) : sample.name;
    SampleRng rng(context.seed, context.epoch, index);
    try {
      transform_->apply(sample, rng, batch.data[kept]);
    } catch (const Error& e) {
      if (on_error != OnError::kSkip) rethrow_naming(name);
      skip(name, e.what());
      continue;
    } catch (...) {
      rethrow_naming(name);
    }
    labels[kept++] = sample.label;
  }
  if (kept < n) {
    // Views of the allocation: still contiguous (the first rows) and still page-locked.
    batch.data = batch.data.narrow(0, 0, kept);
    batch.target = batch.target.narrow(0, 0, kept);
  }
  return batch;
}

void EncodedDataset::skip(const std::string& name, const std::string& message) const {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  ++skipped_.count;
  if (skipped_.first.size() < SkippedSamples::kMaxNames) skipped_.first.push_back(naming(name, message));
}

SkippedSamples EncodedDataset::skipped() const {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  return skipped_;
}

SkippedSamples EncodedDataset::take_skipped() const {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  SkippedSamples out = std::move(skipped_);
  skipped_ = SkippedSamples{};
  return out;
}

}  // namespace feedline
