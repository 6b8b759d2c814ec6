// Data-parallel training on torch.distributed's engine (c10d, inside LibTorch): where a process stands in a job
// (torchrun's environment), its process group (Gloo, or NCCL where the LibTorch has it), and what a training step
// asks of it: parameters broadcast from rank 0, gradients averaged over the ranks in flat buckets, phase totals
// summed.
//
// A failed collective (a peer that died, or stopped answering for the group's timeout) throws DistError, whose
// message names the rank(s) at fault: each rank beats a heartbeat into the store, and a survivor reads who stopped.
//
// Thread-safety: one thread drives a ProcessGroup (the training loop's); its heartbeat thread is internal.
#pragma once

#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/error.h"

namespace feedline::dist {

// A collective or the rendezvous failed: a peer died, stopped answering, or could not be reached in time.
class DistError : public Error {
 public:
  using Error::Error;
};

// Where this process stands in a job, as torchrun (and `feedline train --nproc`) says it in the environment.
struct WorldInfo {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
  int64_t local_world_size = 1;  // the job's ranks on this host (LOCAL_WORLD_SIZE; WORLD_SIZE where unset)
  int64_t group_rank = 0;        // this host's number in the job (torchrun's GROUP_RANK, Slurm's SLURM_NODEID)
  // Who set the environment: "feedline --nproc" (FEEDLINE_STORE_FILE set), else "torchrun" (TORCHELASTIC_RUN_ID or
  // GROUP_RANK present), "slurm" (Slurm's variables read) or "environment" (RANK and WORLD_SIZE set by hand or by
  // another launcher).
  std::string launcher;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // The launcher hosts the store (torchrun's TORCHELASTIC_USE_AGENT_STORE=True): every rank connects to it as a
  // client. Otherwise rank 0 hosts it.
  bool launcher_hosts_store = false;
  // Which start of the job this is (torchrun's TORCHELASTIC_RESTART_COUNT; Slurm's SLURM_RESTART_COUNT for a
  // requeued job): a restarted job's keys in the launcher's store are kept apart from the earlier attempts'.
  int64_t attempt = 0;
  // A FileStore at this path instead of a TCPStore (FEEDLINE_STORE_FILE): the rendezvous of a job on one host,
  // with no port to choose, and no rank whose loss takes the store with it. MASTER_ADDR and MASTER_PORT are then
  // not needed. The file must be new to the job (an earlier job's keys would mislead this one's rendezvous); no
  // rank removes it.
  std::string store_file;
};

// Reads torchrun's environment: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
// MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE, TORCHELASTIC_RESTART_COUNT, and FEEDLINE_STORE_FILE. Where RANK and
// WORLD_SIZE are unset and Slurm started the process (SLURM_PROCID and SLURM_NTASKS set, as srun sets them), reads
// Slurm's as PyTorch Lightning does: rank SLURM_PROCID, world size SLURM_NTASKS, local rank SLURM_LOCALID, host
// SLURM_NODEID, local world size from SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE ("4(x2),3": this host's count
// by SLURM_NODEID), the store on the first host of SLURM_NODELIST (a compressed list such as "node[03-05,09]" is
// expanded) unless MASTER_ADDR is set, and on port MASTER_PORT, else 15000 + the last four digits of
// SLURM_JOB_ID; rank 0 hosts it. (In an sbatch script itself, outside srun, the same variables describe the whole
// allocation: start feedline with srun.) Returns nothing for a one-process run (WORLD_SIZE unset and no Slurm
// task, or SLURM_NTASKS 1). Throws InvalidArgument naming the variable for a value that is not a number, a rank
// outside [0, WORLD_SIZE) or a local rank outside [0, LOCAL_WORLD_SIZE), a node list or tasks-per-node count that
// does not parse, WORLD_SIZE > 1 without MASTER_ADDR and MASTER_PORT or FEEDLINE_STORE_FILE, and a Slurm task
// without SLURM_NODELIST (or MASTER_ADDR) or SLURM_JOB_ID (or MASTER_PORT).
std::optional<WorldInfo> world_from_environment();

struct GroupOptions {
  // "gloo", "nccl" or "auto" (NCCL for a CUDA device when this LibTorch has it, else Gloo).
  std::string backend = "auto";
  // How long a collective or the rendezvous waits for a peer before the job fails.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  // Gradients travel in flat buckets of about this many bytes, as DistributedDataParallel's do.
  int64_t bucket_bytes = int64_t{25} << 20;
};

// The backends this LibTorch build offers, in words ("gloo", "gloo, nccl").
std::string available_backends();

class ProcessGroup {
 public:
  // Rendezvous on a TCPStore at world.master_addr:master_port (or the FileStore at world.store_file) and joins
  // the group. `device` is where the tensors
  // live (it chooses the backend for "auto"). Throws InvalidArgument for an unknown or unavailable backend and
  // DistError when the peers do not all arrive within options.timeout.
  ProcessGroup(const WorldInfo& world, torch::Device device, const GroupOptions& options = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int64_t rank() const;
  int64_t world_size() const;
  const std::string& backend() const;
  const GroupOptions& options() const;

  // Copies rank 0's tensors into every rank's, in place. (Over NCCL, which carries CUDA tensors only, a host
  // tensor travels through the group's device and back; so in allreduce_sum.)
  void broadcast(std::vector<torch::Tensor> tensors);
  // Sums `tensor` over the ranks, in place.
  void allreduce_sum(torch::Tensor& tensor);
  void barrier();
  // Tells the other ranks, through the store, that this rank is failing and why, so that their errors name it.
  // Never throws (a best effort on the way out).
  void report_failure(const std::string& message) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Averages gradients over the ranks: after each backward pass, the parameters' gradients are packed into flat
// buckets of about GroupOptions::bucket_bytes (in parameter order, one dtype and device a bucket), each bucket
// summed with one allreduce and divided by the world size, then unpacked. Ranks that step on batches of equal size
// then take the step one process would take on the whole global batch (up to the order of float additions).
//
// The last bucket carries one more value: 1 where this rank asks to stop, else 0. average(stop) returns whether
// any rank asked, so that every rank stops after the same step without a collective of its own.
class GradientAverager {
 public:
  GradientAverager(ProcessGroup& group, std::vector<torch::Tensor> parameters);
  // Averages the gradients; returns whether any rank passed stop = true.
  bool average(bool stop = false);
  // Seconds spent in allreduce (packing and unpacking included) since the last take.
  double take_seconds();
  int64_t buckets() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  struct Bucket {
    std::vector<size_t> members;  // indices into parameters_
    torch::Tensor flat;
  };
  ProcessGroup& group_;
  std::vector<torch::Tensor> parameters_;
  std::vector<Bucket> buckets_;
  double seconds_ = 0;
};

}  // namespace feedline::dist
