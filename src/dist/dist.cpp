// The process group: a TCPStore rendezvous, c10d's Gloo (or NCCL) backend, and a heartbeat that lets a survivor
// say which rank failed. c10d's own Reducer needs an autograd header Debian's LibTorch lacks, so the gradient
// buckets are ours (GradientAverager, below).
#include "feedline/dist/dist.h"

#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// NCCL where the LibTorch build has it and its header is on the include path (pip torch's CUDA builds: the
// nvidia-nccl package's include folder).
#if defined(USE_C10D_NCCL) && __has_include(<nccl.h>)
#define FEEDLINE_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include "dist/tcp_store.h"

namespace feedline::dist {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kBeatEvery = 1s;
// A rank whose heartbeat has not moved over this window has died or stopped.
constexpr auto kStaleAfter = 2500ms;
// The store's answers while a survivor looks for the rank at fault.
constexpr auto kDiagnosisTimeout = 5s;

// Ends a process group's communicators where the backend offers it (ProcessGroupNCCL::shutdown, LibTorch 2.3 and
// later), so that a group leaves cleanly rather than from its destructor, which LibTorch 2.x warns of.
template <class PG>
auto shut_down(PG& pg, int) -> decltype(pg.shutdown(), void()) {
  pg.shutdown();
}
template <class PG>
void shut_down(PG&, long) {}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::string what_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

std::string beat_key(int64_t rank) { return "feedline/beat/" + std::to_string(rank); }
std::string failed_key(int64_t rank) { return "feedline/failed/" + std::to_string(rank); }

// A connection to the job's store. A launcher's store is shared with the launcher and its earlier attempts:
// this attempt's keys go under the prefix torchrun's workers use, "/worker/attempt_<restart count>".
c10::intrusive_ptr<c10d::Store> connect(const WorldInfo& w, bool server, std::chrono::milliseconds timeout) {
  if (!w.store_file.empty()) {
    // -1 workers: no connection ever deletes the file (the heartbeat's and the diagnosis's are connections too);
    // whoever made it removes it.
    auto store = c10::make_intrusive<c10d::FileStore>(w.store_file, -1);
    store->setTimeout(timeout);
    return store;
  }
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(w.master_port);
  o.isServer = server;
  o.waitWorkers = false;
  o.timeout = timeout;
  detail::classic_tcp_store(o);
  auto store = c10::make_intrusive<c10d::TCPStore>(w.master_addr, o);
  if (!w.launcher_hosts_store) return store;
  return c10::make_intrusive<c10d::PrefixStore>("/worker/attempt_" + std::to_string(w.attempt), store);
}

std::string store_host(const WorldInfo& w) {
  if (!w.store_file.empty()) return "file " + w.store_file;
  return w.master_addr + ":" + std::to_string(w.master_port) +
         (w.launcher_hosts_store ? " (the launcher's)" : " (rank 0 hosts it)");
}

// Which rank is at fault, in words: one that reported its failure, else those whose heartbeat stopped. Blocks
// while the store does not answer.
std::string find_fault(const WorldInfo& world) {
  try {
    auto s = connect(world, /*server=*/false, kDiagnosisTimeout);
    std::string found;
    for (int64_t r = 0; r < world.world_size; ++r) {
      if (r == world.rank || !s->check({failed_key(r)})) continue;
      const auto bytes = s->get(failed_key(r));
      found += (found.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " failed: " +
               std::string(bytes.begin(), bytes.end());
    }
    if (!found.empty()) return found;
    std::vector<int64_t> before;
    for (int64_t r = 0; r < world.world_size; ++r) before.push_back(s->add(beat_key(r), 0));
    std::this_thread::sleep_for(kStaleAfter);
    std::string stale;
    for (int64_t r = 0; r < world.world_size; ++r) {
      if (r != world.rank && s->add(beat_key(r), 0) == before[static_cast<size_t>(r)]) {
        stale += (stale.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    if (stale.empty()) return "every rank's heartbeat still moves: the network between the ranks may be at fault";
    return (stale.find(',') == std::string::npos ? "rank " : "ranks ") + stale +
           " stopped answering (no heartbeat for " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kStaleAfter).count()) +
           " ms): died, was killed or was stopped";
  } catch (const std::exception& e) {
    const bool rank0_hosts = !world.launcher_hosts_store && world.store_file.empty();
    return "the rendezvous store at " + store_host(world) + " does not answer" +
           (rank0_hosts ? ": rank 0, which hosts it, has died or stopped" : "") + " (" + what_of(e) + ")";
  }
}

}  // namespace

std::string available_backends() {
#ifdef FEEDLINE_NCCL
  return "gloo, nccl";
#else
  return "gloo";
#endif
}

struct ProcessGroup::Impl {
  WorldInfo world;
  GroupOptions options;
  std::string backend;
  torch::Device device = torch::kCPU;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#ifdef FEEDLINE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif

  struct Beat {
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
  };
  std::shared_ptr<Beat> beat = std::make_shared<Beat>();

  // Runs `op` on whichever backend the group has; a failure becomes a DistError that names the rank at fault.
  template <class Op>
  void collective(const char* what, Op&& op) {
    try {
#ifdef FEEDLINE_NCCL
      if (nccl) {
        op(*nccl);
        return;
      }
#endif
      op(*gloo);
    } catch (const std::exception& e) {
      throw DistError("rank " + std::to_string(world.rank) + ": " + what + " failed: " + diagnose() + " (" +
                      what_of(e) + ")");
    }
  }

  void start_heartbeat() {
    // A connection of its own: a TCPStore client serves one thread at a time.
    auto beats = connect(world, /*server=*/false, options.timeout);
    beats->add(beat_key(world.rank), 1);
    // Detached, never joined: a store whose host was stopped never answers, and a stuck heartbeat must not hold
    // up the rank's exit. It shares nothing with this object but `beat`.
    std::thread([b = beat, beats, key = beat_key(world.rank)] {
      std::unique_lock<std::mutex> lock(b->mutex);
      while (!b->wake.wait_for(lock, kBeatEvery, [&] { return b->stopping; })) {
        lock.unlock();
        try {
          beats->add(key, 1);
        } catch (const std::exception&) {
          return;  // the store is gone; the collective that notices says so
        }
        lock.lock();
      }
    }).detach();
  }

  void stop_heartbeat() {
    {
      std::lock_guard<std::mutex> lock(beat->mutex);
      beat->stopping = true;
    }
    beat->wake.notify_all();
  }

  // Which rank is at fault, in words. Asked on a thread of its own with a deadline: a store whose host was
  // stopped accepts connections and never answers.
  std::string diagnose() noexcept {
    try {
      auto answer = std::make_shared<std::promise<std::string>>();
      auto future = answer->get_future();
      std::thread([w = world, answer] { answer->set_value(find_fault(w)); }).detach();
      if (future.wait_for(kDiagnosisTimeout + kStaleAfter + 1s) == std::future_status::ready) return future.get();
    } catch (const std::exception&) {
    }
    return "the rendezvous store at " + store_host(world) + " does not answer" +
           (world.launcher_hosts_store || !world.store_file.empty() ? ""
                                                                    : ": rank 0, which hosts it, has died or stopped");
  }
};

ProcessGroup::ProcessGroup(const WorldInfo& world, torch::Device device, const GroupOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.world = world;
  m.options = options;
  if (world.world_size < 1 || world.rank < 0 || world.rank >= world.world_size) {
    throw InvalidArgument("ProcessGroup: rank " + std::to_string(world.rank) + " is outside [0, " +
                          std::to_string(world.world_size) + ")");
  }
  if (options.timeout <= std::chrono::milliseconds(0)) throw InvalidArgument("ProcessGroup: the timeout must be positive");
  if (options.bucket_bytes < 1) throw InvalidArgument("ProcessGroup: bucket_bytes must be at least 1");
  std::string backend = options.backend;
  if (backend == "auto") {
    backend = device.is_cuda() && available_backends().find("nccl") != std::string::npos ? "nccl" : "gloo";
  }
  if (backend != "gloo" && backend != "nccl") {
    throw InvalidArgument("unknown distributed backend '" + options.backend + "' (use gloo, nccl or auto)");
  }
  if (backend == "nccl" && available_backends().find("nccl") == std::string::npos) {
    throw InvalidArgument("the nccl backend is not in this LibTorch build (it has " + available_backends() +
                          "); use the gloo backend");
  }
  if (backend == "nccl" && !device.is_cuda()) {
    throw InvalidArgument("the nccl backend needs a CUDA device, and the device is " + device.str());
  }
  m.backend = backend;
  m.device = device;

  const bool server = !world.launcher_hosts_store && world.store_file.empty() && world.rank == 0;
  try {
    m.store = connect(world, server, options.timeout);
  } catch (const std::exception& e) {
    throw DistError("rank " + std::to_string(world.rank) + ": cannot " + (server ? "host" : "reach") +
                    " the rendezvous store at " + store_host(m.world) + ": " + what_of(e));
  }
  try {
    m.start_heartbeat();
    if (backend == "gloo") {
      auto o = c10d::ProcessGroupGloo::Options::create(options.timeout);
      const std::string interface = [] {
        const char* v = std::getenv("GLOO_SOCKET_IFNAME");
        return std::string(v != nullptr ? v : "");
      }();
      if (!interface.empty()) {
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
      } else if (is_loopback(world.master_addr)) {
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      m.gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(m.store, world.rank, world.world_size, o);
    } else {
#ifdef FEEDLINE_NCCL
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = options.timeout;
      m.nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(m.store, world.rank, world.world_size, o);
#endif
    }
  } catch (const std::exception& e) {
    m.stop_heartbeat();
    throw DistError("rank " + std::to_string(world.rank) + ": the " + backend + " rendezvous of " +
                    std::to_string(world.world_size) + " ranks at " + store_host(m.world) + " failed within " +
                    std::to_string(options.timeout.count() / 1000.0).substr(0, 5) + " s: " + what_of(e));
  }
}

ProcessGroup::~ProcessGroup() {
  impl_->stop_heartbeat();
#ifdef FEEDLINE_NCCL
  if (impl_->nccl) {
    try {
      shut_down(*impl_->nccl, 0);
    } catch (const std::exception&) {
      // a group whose peers have gone: nothing left to end cleanly
    }
  }
#endif
}

int64_t ProcessGroup::rank() const { return impl_->world.rank; }
int64_t ProcessGroup::world_size() const { return impl_->world.world_size; }
const std::string& ProcessGroup::backend() const { return impl_->backend; }
const GroupOptions& ProcessGroup::options() const { return impl_->options; }

void ProcessGroup::broadcast(std::vector<torch::Tensor> tensors) {
  const auto from_rank_0 = [this](std::vector<torch::Tensor>& v) {
    impl_->collective("broadcast", [&](auto& pg) {
      c10d::BroadcastOptions o;
      o.rootRank = 0;
      pg.broadcast(v, o)->wait();
    });
  };
  if (impl_->backend != "nccl") {
    from_rank_0(tensors);
    return;
  }
  // NCCL takes one CUDA tensor a call: each goes on its own, a host tensor through the group's device and back.
  for (auto& t : tensors) {
    std::vector<torch::Tensor> one{t.is_cuda() ? t : t.to(impl_->device)};
    from_rank_0(one);
    if (!t.is_cuda()) t.copy_(one[0]);
  }
}

void ProcessGroup::allreduce_sum(torch::Tensor& tensor) {
  // NCCL carries CUDA tensors only: a host tensor (a phase's totals) goes through the group's device and back.
  if (impl_->backend == "nccl" && !tensor.is_cuda()) {
    torch::Tensor on_device = tensor.to(impl_->device);
    allreduce_sum(on_device);
    tensor.copy_(on_device);
    return;
  }
  impl_->collective("allreduce", [&](auto& pg) {
    std::vector<at::Tensor> v{tensor};
    pg.allreduce(v, c10d::AllreduceOptions())->wait();
  });
}

void ProcessGroup::barrier() {
  impl_->collective("barrier", [&](auto& pg) { pg.barrier(c10d::BarrierOptions())->wait(); });
}

void ProcessGroup::report_failure(const std::string& message) noexcept {
  try {
    auto s = connect(impl_->world, /*server=*/false, kDiagnosisTimeout);
    const std::string text = message.substr(0, 2000);
    s->set(failed_key(impl_->world.rank), std::vector<uint8_t>(text.begin(), text.end()));
  } catch (...) {
  }
}

// ------------------------------------------------------------------------------------------- GradientAverager

GradientAverager::GradientAverager(ProcessGroup& group, std::vector<torch::Tensor> parameters)
    : group_(group), parameters_(std::move(parameters)) {
  const int64_t limit = group.options().bucket_bytes;
  int64_t bytes = 0;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const auto& p = parameters_[i];
    const bool fits = !buckets_.empty() && bytes + p.numel() * p.element_size() <= limit &&
                      parameters_[buckets_.back().members.front()].options().type_equal(p.options());
    if (!fits) {
      buckets_.emplace_back();
      bytes = 0;
    }
    buckets_.back().members.push_back(i);
    bytes += p.numel() * p.element_size();
  }
  // With no parameters, the stop flag travels alone.
  if (buckets_.empty()) buckets_.emplace_back();
  for (auto& b : buckets_) {
    int64_t n = 0;
    for (const size_t i : b.members) n += parameters_[i].numel();
    // The last bucket holds the stop flag after its gradients.
    if (&b == &buckets_.back()) ++n;
    b.flat = torch::empty({n}, b.members.empty() ? torch::TensorOptions(torch::kFloat)
                                                  : parameters_[b.members.front()].options());
  }
}

bool GradientAverager::average(bool stop) {
  const auto start = Clock::now();
  const double world = static_cast<double>(group_.world_size());
  torch::NoGradGuard no_grad;
  auto& flag_bucket = buckets_.back();
  const int64_t flag_at = flag_bucket.flat.numel() - 1;
  flag_bucket.flat.narrow(0, flag_at, 1).fill_(stop ? 1.0 : 0.0);
  for (auto& b : buckets_) {
    int64_t at = 0;
    for (const size_t i : b.members) {
      const auto& p = parameters_[i];
      auto slot = b.flat.narrow(0, at, p.numel());
      // A parameter the step did not reach has no gradient: it takes part as zeros, on every rank alike.
      if (p.grad().defined()) {
        slot.copy_(p.grad().reshape({-1}));
      } else {
        slot.zero_();
      }
      at += p.numel();
    }
    group_.allreduce_sum(b.flat);
    b.flat.div_(world);
    at = 0;
    for (const size_t i : b.members) {
      auto& p = parameters_[i];
      auto slot = b.flat.narrow(0, at, p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        p.mutable_grad().copy_(slot);
      } else {
        p.mutable_grad() = slot.clone();
      }
      at += p.numel();
    }
  }
  // Any rank's 1 leaves the mean above 0.
  const bool any_stop = flag_bucket.flat[flag_at].item<double>() > 0;
  seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  return any_stop;
}

double GradientAverager::take_seconds() { return std::exchange(seconds_, 0.0); }

}  // namespace feedline::dist
