// Mixtures (dataset.h, encoded.h): the plan's arithmetic, and the two ways of serving it, MixtureDataset over
// datasets of whole samples and MixtureSource over sources of encoded ones.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "dataset/permutation.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"

namespace feedline {
namespace {

// Seeds of the plan's own draws, apart from the loader's (mix64(seed ^ mix64(epoch))).
constexpr uint64_t kSlotsSalt = 0x6D697874736C6F74ULL;   // which source each position takes
constexpr uint64_t kPassesSalt = 0x6D69787470617373ULL;  // each source's passes

std::string kind_name(MixturePart::Kind kind) {
  switch (kind) {
    case MixturePart::Kind::kProportion:
      return "proportion";
    case MixturePart::Kind::kCount:
      return "count";
    case MixturePart::Kind::kRepeat:
      break;
  }
  return "repeat";
}

// Whole shares of `total` in proportion to `weights` (none negative, their sum above 0), each the floor of its
// exact share, the rest given one each to the largest remainders (the first source first on a tie).
std::vector<int64_t> largest_remainders(const std::vector<long double>& weights, int64_t total) {
  const long double sum = std::accumulate(weights.begin(), weights.end(), 0.0L);
  std::vector<int64_t> out(weights.size());
  std::vector<std::pair<long double, size_t>> remainders;
  int64_t given = 0;
  for (size_t s = 0; s < weights.size(); ++s) {
    const long double exact = weights[s] / sum * static_cast<long double>(total);
    out[s] = static_cast<int64_t>(std::floor(exact));
    given += out[s];
    remainders.emplace_back(exact - static_cast<long double>(out[s]), s);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < total && i < remainders.size(); ++i, ++given) ++out[remainders[i].second];
  return out;
}

std::string shape_of(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + "] " + std::string(c10::toString(t.scalar_type()));
}

}  // namespace

MixturePart MixturePart::proportion(double p) {
  MixturePart part;
  part.kind = Kind::kProportion;
  part.value = p;
  return part;
}

MixturePart MixturePart::repeat(double r) {
  MixturePart part;
  part.kind = Kind::kRepeat;
  part.value = r;
  return part;
}

MixturePart MixturePart::count(int64_t n) {
  MixturePart part;
  part.kind = Kind::kCount;
  part.value = static_cast<double>(n);
  return part;
}

// ------------------------------------------------------------------------------------------------- MixturePlan

MixturePlan::MixturePlan(std::vector<int64_t> sizes, std::vector<MixturePart> parts, int64_t epoch_size,
                         std::vector<std::vector<int64_t>> blocks)
    : sizes_(std::move(sizes)), parts_(std::move(parts)), blocks_(std::move(blocks)) {
  if (sizes_.empty()) throw InvalidArgument("mixture: no sources");
  if (parts_.size() != sizes_.size()) {
    throw InvalidArgument("mixture: " + std::to_string(sizes_.size()) + " sources and " +
                          std::to_string(parts_.size()) + " weights; give one weight a source");
  }
  if (blocks_.empty()) blocks_.resize(sizes_.size());
  if (blocks_.size() != sizes_.size()) throw InvalidArgument("mixture: shuffle blocks for another number of sources");
  if (epoch_size < 0) throw InvalidArgument("mixture: epoch size " + std::to_string(epoch_size) + " is negative");
  offsets_.push_back(0);
  size_t proportions = 0;
  for (size_t s = 0; s < sizes_.size(); ++s) {
    const MixturePart& p = parts_[s];
    const std::string who = "mixture: " + name(s);
    if (sizes_[s] < 1) throw InvalidArgument(who + " holds no samples");
    if (!std::isfinite(p.value) || p.value <= 0) {
      throw InvalidArgument(who + " has " + kind_name(p.kind) + " " + std::to_string(p.value) +
                            "; it must be above 0 and finite");
    }
    if (p.kind == MixturePart::Kind::kCount && p.value != std::floor(p.value)) {
      throw InvalidArgument(who + " has count " + std::to_string(p.value) + "; a count is a whole number");
    }
    for (size_t l = 0; l < p.label_map.size(); ++l) {
      if (p.label_map[l] < 0) {
        throw InvalidArgument(who + " maps label " + std::to_string(l) + " to " + std::to_string(p.label_map[l]) +
                              "; labels are 0 or more");
      }
    }
    if (!blocks_[s].empty()) {
      int64_t held = 0;
      for (const int64_t b : blocks_[s]) {
        if (b < 0) throw InvalidArgument(who + " has a shuffle block of negative size");
        held += b;
      }
      if (held != sizes_[s]) {
        throw InvalidArgument(who + "'s shuffle blocks hold " + std::to_string(held) + " samples, not its " +
                              std::to_string(sizes_[s]));
      }
    }
    proportions += p.kind == MixturePart::Kind::kProportion ? 1 : 0;
    offsets_.push_back(offsets_.back() + sizes_[s]);
  }
  if (proportions != 0 && proportions != sizes_.size()) {
    for (size_t s = 0; s < parts_.size(); ++s) {
      if (parts_[s].kind != MixturePart::Kind::kProportion) {
        throw InvalidArgument("mixture: " + name(s) + " has a " + kind_name(parts_[s].kind) +
                              " and others a proportion; give every source a proportion, or none");
      }
    }
  }
  std::vector<long double> weights(sizes_.size());
  if (proportions != 0) {
    for (size_t s = 0; s < parts_.size(); ++s) weights[s] = parts_[s].value;
    epoch_length_ = epoch_size > 0 ? epoch_size : total_size();
    counts_ = largest_remainders(weights, epoch_length_);
  } else {
    for (size_t s = 0; s < parts_.size(); ++s) {
      const MixturePart& p = parts_[s];
      const long double n = p.kind == MixturePart::Kind::kCount
                                ? static_cast<long double>(p.value)
                                : std::round(static_cast<long double>(p.value) * static_cast<long double>(sizes_[s]));
      if (n < 1) {
        throw InvalidArgument("mixture: " + name(s) + " has repeat " + std::to_string(p.value) + " of its " +
                              std::to_string(sizes_[s]) + " samples, which gives none an epoch");
      }
      if (n > 1e15L) throw InvalidArgument("mixture: " + name(s) + " gives too many samples an epoch");
      weights[s] = n;
      counts_.push_back(static_cast<int64_t>(n));
    }
    if (epoch_size > 0) counts_ = largest_remainders(weights, epoch_size);
    epoch_length_ = std::accumulate(counts_.begin(), counts_.end(), int64_t{0});
  }
  if (epoch_length_ < 1) throw InvalidArgument("mixture: an epoch of no samples");
}

std::string MixturePlan::name(size_t source) const {
  const std::string number = "source " + std::to_string(source + 1);
  return parts_[source].name.empty() ? number : number + " (" + parts_[source].name + ")";
}

size_t MixturePlan::source_of(int64_t index) const {
  if (index < 0 || index >= total_size()) {
    throw InvalidArgument("mixture: index " + std::to_string(index) + " outside 0.." +
                          std::to_string(total_size() - 1));
  }
  return static_cast<size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), index) - offsets_.begin() - 1);
}

int64_t MixturePlan::label(size_t source, int64_t label) const {
  const MixturePart& p = parts_[source];
  if (!p.label_map.empty()) {
    if (label < 0 || label >= static_cast<int64_t>(p.label_map.size())) {
      throw InvalidArgument("mixture: " + name(source) + " has label " + std::to_string(label) +
                            ", which its label map of " + std::to_string(p.label_map.size()) +
                            " entries does not hold");
    }
    label = p.label_map[static_cast<size_t>(label)];
  }
  return label + p.label_offset;
}

std::vector<int64_t> MixturePlan::epoch_order(bool shuffle, uint64_t seed, int64_t epoch) const {
  const size_t n_sources = sizes_.size();
  // Which source each position takes: each source's count of them, shuffled, or spread evenly (the j-th of
  // source s at (j + 1/2) / count, in that order; a tie goes to the first source).
  std::vector<int64_t> slots(static_cast<size_t>(epoch_length_));
  if (shuffle) {
    size_t at = 0;
    for (size_t s = 0; s < n_sources; ++s) {
      for (int64_t j = 0; j < counts_[s]; ++j) slots[at++] = static_cast<int64_t>(s);
    }
    detail::fast_shuffle(slots.data(), epoch_length_, seed ^ kSlotsSalt, epoch);
  } else {
    std::vector<int64_t> taken(n_sources, 0);
    for (auto& slot : slots) {
      size_t best = n_sources;
      for (size_t s = 0; s < n_sources; ++s) {
        if (taken[s] == counts_[s]) continue;
        // (2 taken[s] + 1) / counts[s] < (2 taken[best] + 1) / counts[best], in whole numbers.
        if (best == n_sources || static_cast<__int128>(2 * taken[s] + 1) * counts_[best] <
                                     static_cast<__int128>(2 * taken[best] + 1) * counts_[s]) {
          best = s;
        }
      }
      slot = static_cast<int64_t>(best);
      ++taken[best];
    }
  }
  // Each source deals from its stream of passes, from where the epochs before this one left it: pass `pass[s]`, at
  // its position `at[s]`.
  std::vector<int64_t> pass(n_sources), at(n_sources);
  std::vector<std::vector<int64_t>> orders(n_sources);
  const auto pass_order = [&](size_t s) {
    return detail::epoch_permutation(sizes_[s], shuffle, mix64(seed ^ mix64(kPassesSalt + s)), pass[s], blocks_[s]);
  };
  for (size_t s = 0; s < n_sources; ++s) {
    pass[s] = epoch * counts_[s] / sizes_[s];
    at[s] = epoch * counts_[s] % sizes_[s];
    if (counts_[s] > 0) orders[s] = pass_order(s);
  }
  std::vector<int64_t> out(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto s = static_cast<size_t>(slots[i]);
    if (at[s] == sizes_[s]) {
      ++pass[s];
      at[s] = 0;
      orders[s] = pass_order(s);
    }
    out[i] = offsets_[s] + orders[s][static_cast<size_t>(at[s]++)];
  }
  return out;
}

std::vector<std::vector<int64_t>> MixturePlan::split(const std::vector<int64_t>& order) const {
  std::vector<std::vector<int64_t>> out(sizes_.size());
  for (const int64_t index : order) {
    const size_t s = source_of(index);
    out[s].push_back(index - offsets_[s]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- MixtureDataset

namespace {

std::vector<int64_t> sizes_of(const std::vector<std::shared_ptr<const Dataset>>& sources) {
  std::vector<int64_t> out;
  for (size_t s = 0; s < sources.size(); ++s) {
    if (!sources[s]) throw InvalidArgument("MixtureDataset: source " + std::to_string(s + 1) + " is missing");
    out.push_back(sources[s]->size());
  }
  return out;
}

std::vector<std::vector<int64_t>> blocks_of(const std::vector<std::shared_ptr<const Dataset>>& sources) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& s : sources) out.push_back(s ? s->shuffle_blocks() : std::vector<int64_t>{});
  return out;
}

}  // namespace

MixtureDataset::MixtureDataset(std::vector<std::shared_ptr<const Dataset>> sources, std::vector<MixturePart> parts,
                               int64_t epoch_size)
    : sources_(std::move(sources)), plan_(sizes_of(sources_), std::move(parts), epoch_size, blocks_of(sources_)) {
  Example first;
  for (size_t s = 0; s < sources_.size(); ++s) {
    const std::string who = "MixtureDataset: " + plan_.name(s);
    if (sources_[s]->resident_device()) {
      throw InvalidArgument(who + " lives on a device; mix datasets in host memory");
    }
    if (sources_[s]->makes_batches()) {
      throw InvalidArgument(who + " makes its own batches (samples stored encoded); mix their sample sources with "
                                  "MixtureSource, under one EncodedDataset");
    }
    const Example e = sources_[s]->get(0);
    if (plan_.relabels(s) && !(e.target.defined() && c10::isIntegralType(e.target.scalar_type(), false))) {
      throw InvalidArgument(who + " has a label map or offset, and its targets are " + shape_of(e.target) +
                            ", not class numbers");
    }
    if (s == 0) {
      first = e;
      continue;
    }
    const auto differs = [&](const char* what, const torch::Tensor& mine, const torch::Tensor& theirs) {
      throw InvalidArgument(who + " gives " + what + " of " + shape_of(mine) + ", and " + plan_.name(0) + " of " +
                            shape_of(theirs) + "; mixed sources must agree on a sample");
    };
    if (e.data.sizes() != first.data.sizes() || e.data.scalar_type() != first.data.scalar_type()) {
      differs("data", e.data, first.data);
    }
    if (e.target.sizes() != first.target.sizes() || e.target.scalar_type() != first.target.scalar_type()) {
      differs("targets", e.target, first.target);
    }
  }
  // Tensor datasets are joined into one, relabelled, so that a batch is one gather, as from a single source.
  std::vector<torch::Tensor> images, labels;
  for (size_t s = 0; s < sources_.size(); ++s) {
    const auto* tensors = dynamic_cast<const TensorDataset*>(sources_[s].get());
    if (tensors == nullptr) return;
    images.push_back(tensors->images());
    labels.push_back(relabelled(s, tensors->labels()));
  }
  joined_ = std::make_shared<TensorDataset>(torch::cat(images), torch::cat(labels), /*class_labels=*/false);
  sources_.clear();  // the joined copy holds every sample
}

torch::Tensor MixtureDataset::relabelled(size_t source, torch::Tensor target) const {
  if (!plan_.relabels(source)) return target;
  const MixturePart& p = plan_.part(source);
  torch::Tensor labels = target.to(torch::kInt64);
  if (!p.label_map.empty()) {
    const auto map = torch::tensor(p.label_map, torch::kInt64);
    if (labels.numel() > 0) {
      const int64_t low = labels.min().item<int64_t>(), high = labels.max().item<int64_t>();
      const int64_t bad = low < 0 ? low : high;
      if (low < 0 || high >= map.size(0)) (void)plan_.label(source, bad);  // throws, naming the label
    }
    labels = map.index_select(0, labels.flatten()).view(labels.sizes());
  }
  return (p.label_offset != 0 ? labels + p.label_offset : labels).to(target.scalar_type());
}

Example MixtureDataset::get(int64_t index) const {
  if (joined_) return joined_->get(index);
  const size_t s = plan_.source_of(index);
  Example e = sources_[s]->get(index - plan_.offset(s));
  e.target = relabelled(s, e.target);
  return e;
}

Example MixtureDataset::get_batch(const std::vector<int64_t>& indices) const {
  if (joined_) return joined_->get_batch(indices);
  std::vector<std::vector<int64_t>> local(sources_.size()), positions(sources_.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t s = plan_.source_of(indices[i]);
    local[s].push_back(indices[i] - plan_.offset(s));
    positions[s].push_back(static_cast<int64_t>(i));
  }
  Example out;
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (local[s].empty()) continue;
    Example part = sources_[s]->get_batch(local[s]);
    part.target = relabelled(s, part.target);
    if (local[s].size() == indices.size()) return part;  // the whole batch from one source
    if (part.data.size(0) != static_cast<int64_t>(local[s].size())) {
      throw InvalidArgument("MixtureDataset: " + plan_.name(s) + " made " + std::to_string(part.data.size(0)) +
                            " samples of the " + std::to_string(local[s].size()) + " asked");
    }
    if (!out.data.defined()) {
      const auto n = static_cast<int64_t>(indices.size());
      auto data_sizes = part.data.sizes().vec(), target_sizes = part.target.sizes().vec();
      data_sizes[0] = target_sizes[0] = n;
      out.data = torch::empty(data_sizes, part.data.options());
      out.target = torch::empty(target_sizes, part.target.options());
    }
    const auto at = torch::tensor(positions[s], torch::kInt64);
    out.data.index_copy_(0, at, part.data);
    out.target.index_copy_(0, at, part.target);
  }
  if (!out.data.defined()) throw InvalidArgument("MixtureDataset: an empty batch");
  return out;
}

void MixtureDataset::will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
  if (joined_) return;  // in memory
  const auto parts = plan_.split(order);
  for (size_t s = 0; s < sources_.size(); ++s) sources_[s]->will_read(parts[s], ahead);
}

// ----------------------------------------------------------------------------------------------- MixtureSource

namespace {

std::vector<int64_t> sizes_of(const std::vector<std::shared_ptr<const SampleSource>>& sources) {
  std::vector<int64_t> out;
  for (size_t s = 0; s < sources.size(); ++s) {
    if (!sources[s]) throw InvalidArgument("MixtureSource: source " + std::to_string(s + 1) + " is missing");
    out.push_back(sources[s]->size());
  }
  return out;
}

std::vector<std::vector<int64_t>> blocks_of(const std::vector<std::shared_ptr<const SampleSource>>& sources) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& s : sources) out.push_back(s ? s->shuffle_blocks() : std::vector<int64_t>{});
  return out;
}

}  // namespace

MixtureSource::MixtureSource(std::vector<std::shared_ptr<const SampleSource>> sources, std::vector<MixturePart> parts,
                             int64_t epoch_size)
    : sources_(std::move(sources)), plan_(sizes_of(sources_), std::move(parts), epoch_size, blocks_of(sources_)) {
  // The classes as the mixture numbers them, and which source named each first.
  std::map<int64_t, std::pair<std::string, size_t>> named;
  for (size_t s = 0; s < sources_.size(); ++s) {
    const std::vector<std::string> names = sources_[s]->class_names();
    const auto& map = plan_.part(s).label_map;
    for (size_t c = 0; c < names.size(); ++c) {
      if (!map.empty() && c >= map.size()) continue;  // a class the map leaves out never reaches the mixture
      const int64_t label = plan_.label(s, static_cast<int64_t>(c));
      const auto [it, fresh] = named.emplace(label, std::make_pair(names[c], s));
      if (!fresh && it->second.first != names[c]) {
        throw InvalidArgument("MixtureSource: " + plan_.name(s) + " names class " + std::to_string(label) + " '" +
                              names[c] + "', and " + plan_.name(it->second.second) + " names it '" +
                              it->second.first + "'; give one of them a label map or a label offset");
      }
    }
  }
  if (!named.empty()) {
    class_names_.resize(static_cast<size_t>(named.rbegin()->first + 1));
    for (size_t l = 0; l < class_names_.size(); ++l) {
      const auto it = named.find(static_cast<int64_t>(l));
      class_names_[l] = it != named.end() ? it->second.first : std::to_string(l);
    }
  }
}

EncodedSample MixtureSource::get(int64_t index) const {
  const size_t s = plan_.source_of(index);
  EncodedSample sample = sources_[s]->get(index - plan_.offset(s));
  if (plan_.relabels(s)) sample.label = plan_.label(s, sample.label);
  return sample;
}

std::vector<int64_t> MixtureSource::labels() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(size()));
  for (size_t s = 0; s < sources_.size(); ++s) {
    for (const int64_t l : sources_[s]->labels()) out.push_back(plan_.relabels(s) ? plan_.label(s, l) : l);
  }
  return out;
}

void MixtureSource::will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
  const auto parts = plan_.split(order);
  for (size_t s = 0; s < sources_.size(); ++s) sources_[s]->will_read(parts[s], ahead);
}

}  // namespace feedline
