// Where a process stands in a job, read from the environment its launcher made: torchrun's variables (which
// `feedline train --nproc` sets too), or Slurm's where srun started the process.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "feedline/dist/dist.h"

namespace feedline::dist {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

bool has_env(const char* name) { return std::getenv(name) != nullptr; }

// A whole number >= 0 in `text`, or -1.
int64_t whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18) return -1;
  return std::stoll(text);
}

int64_t env_number(const char* name, int64_t fallback) {
  const std::string v = env(name);
  if (v.empty()) return fallback;
  const int64_t n = whole_number(v);
  if (n < 0) throw InvalidArgument(std::string("environment variable ") + name + "='" + v + "' is not a whole number");
  return n;
}

[[noreturn]] void refuse(const char* name, const std::string& value, const std::string& why) {
  throw InvalidArgument(std::string("environment variable ") + name + "='" + value + "' " + why);
}

// The first host of a Slurm node list: "node[03-05,09]" -> "node03", "a1,a2" -> "a1", "gpu-[1-2]x,b" -> "gpu-1x",
// "r[1-2]-n[07,08]" -> "r1-n07". Each bracket's first number or range start, as written (zeros kept).
std::string first_host(const char* name, const std::string& list) {
  std::string host;
  size_t i = 0;
  while (i < list.size() && list[i] != ',') {
    if (list[i] == ']') refuse(name, list, "is not a Slurm node list (a ']' without its '[')");
    if (list[i] != '[') {
      host += list[i++];
      continue;
    }
    const size_t close = list.find(']', i);
    if (close == std::string::npos) refuse(name, list, "is not a Slurm node list (a '[' without its ']')");
    const std::string inside = list.substr(i + 1, close - i - 1);
    const std::string first = inside.substr(0, inside.find_first_of(",-"));
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) {
      refuse(name, list, "is not a Slurm node list (a bracket holds '" + inside + "', not numbers and ranges)");
    }
    host += first;
    i = close + 1;
  }
  if (host.empty()) refuse(name, list, "names no host");
  return host;
}

// The tasks on each host of a Slurm step, "4(x2),3" -> {4, 4, 3}.
std::vector<int64_t> tasks_per_node(const char* name, const std::string& text) {
  std::vector<int64_t> counts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t paren = item.find('(');
    const int64_t count = whole_number(item.substr(0, paren));
    int64_t repeat = 1;
    if (paren != std::string::npos) {
      const bool closed = item.size() > paren + 3 && item.compare(paren, 2, "(x") == 0 && item.back() == ')';
      repeat = closed ? whole_number(item.substr(paren + 2, item.size() - paren - 3)) : -1;
    }
    if (count < 1 || repeat < 1) refuse(name, text, "is not a count of tasks per host such as \"4(x2),3\"");
    counts.insert(counts.end(), static_cast<size_t>(repeat), count);
    start = end + 1;
  }
  return counts;
}

void check_inside(const char* name, int64_t value, const char* size_name, int64_t size) {
  if (value >= size) {
    throw InvalidArgument(std::string("environment variable ") + name + "=" + std::to_string(value) +
                          " is outside [0, " + size_name + "=" + std::to_string(size) + ")");
  }
}

int checked_port(const char* name, int64_t port) {
  if (port < 1 || port > 65535) refuse(name, std::to_string(port), "is not a port");
  return static_cast<int>(port);
}

// torchrun's variables (or another launcher's, or set by hand).
WorldInfo from_torchrun_variables() {
  WorldInfo w;
  w.world_size = env_number("WORLD_SIZE", 1);
  if (w.world_size < 1) throw InvalidArgument("environment variable WORLD_SIZE must be at least 1");
  w.rank = env_number("RANK", 0);
  check_inside("RANK", w.rank, "WORLD_SIZE", w.world_size);
  w.local_rank = env_number("LOCAL_RANK", w.rank);
  w.local_world_size = env_number("LOCAL_WORLD_SIZE", w.world_size);
  if (w.local_world_size < 1 || w.local_world_size > w.world_size) {
    refuse("LOCAL_WORLD_SIZE", env("LOCAL_WORLD_SIZE"),
           "is not in [1, WORLD_SIZE=" + std::to_string(w.world_size) + "]");
  }
  check_inside("LOCAL_RANK", w.local_rank, "LOCAL_WORLD_SIZE", w.local_world_size);
  w.group_rank = env_number("GROUP_RANK", 0);
  w.store_file = env("FEEDLINE_STORE_FILE");
  if (!w.store_file.empty()) {
    w.launcher = "feedline --nproc";
  } else if (has_env("TORCHELASTIC_RUN_ID") || has_env("GROUP_RANK")) {
    w.launcher = "torchrun";
  } else {
    w.launcher = "environment";
  }
  w.master_addr = env("MASTER_ADDR");
  const int64_t port = env_number("MASTER_PORT", 0);
  if (w.world_size > 1 && w.store_file.empty() && (w.master_addr.empty() || port == 0)) {
    throw InvalidArgument("WORLD_SIZE=" + std::to_string(w.world_size) +
                          " needs MASTER_ADDR and MASTER_PORT (where rank 0 or the launcher hosts the rendezvous), or "
                          "FEEDLINE_STORE_FILE (a file every rank on this host can reach)");
  }
  if (w.master_addr.empty()) w.master_addr = "127.0.0.1";
  w.master_port = port == 0 ? 29500 : checked_port("MASTER_PORT", port);
  const std::string agent = env("TORCHELASTIC_USE_AGENT_STORE");
  w.launcher_hosts_store = agent == "True" || agent == "true" || agent == "1";
  w.attempt = env_number("TORCHELASTIC_RESTART_COUNT", 0);
  return w;
}

// Slurm's variables, as srun sets them for each task.
WorldInfo from_slurm_variables() {
  WorldInfo w;
  w.launcher = "slurm";
  w.world_size = env_number("SLURM_NTASKS", 1);
  if (w.world_size < 1) throw InvalidArgument("environment variable SLURM_NTASKS must be at least 1");
  w.rank = env_number("SLURM_PROCID", 0);
  check_inside("SLURM_PROCID", w.rank, "SLURM_NTASKS", w.world_size);
  w.local_rank = env_number("SLURM_LOCALID", 0);
  w.group_rank = env_number("SLURM_NODEID", 0);
  if (has_env("SLURM_NTASKS_PER_NODE")) {
    w.local_world_size = env_number("SLURM_NTASKS_PER_NODE", 1);
    if (w.local_world_size < 1) refuse("SLURM_NTASKS_PER_NODE", "0", "is not a count of tasks");
  } else if (has_env("SLURM_TASKS_PER_NODE")) {
    const auto counts = tasks_per_node("SLURM_TASKS_PER_NODE", env("SLURM_TASKS_PER_NODE"));
    if (w.group_rank >= static_cast<int64_t>(counts.size())) {
      throw InvalidArgument("environment variable SLURM_NODEID=" + std::to_string(w.group_rank) +
                            " has no count in SLURM_TASKS_PER_NODE='" + env("SLURM_TASKS_PER_NODE") + "' (" +
                            std::to_string(counts.size()) + " hosts)");
    }
    w.local_world_size = counts[static_cast<size_t>(w.group_rank)];
  } else {
    const int64_t hosts = std::max<int64_t>(1, env_number("SLURM_JOB_NUM_NODES", env_number("SLURM_NNODES", 1)));
    w.local_world_size = (w.world_size + hosts - 1) / hosts;
  }
  check_inside("SLURM_LOCALID", w.local_rank, "the tasks on this host", w.local_world_size);
  w.master_addr = env("MASTER_ADDR");
  if (w.master_addr.empty()) {
    const char* list_name = has_env("SLURM_NODELIST") ? "SLURM_NODELIST" : "SLURM_JOB_NODELIST";
    if (!has_env(list_name)) {
      throw InvalidArgument("a Slurm task (SLURM_PROCID, SLURM_NTASKS) needs SLURM_NODELIST or MASTER_ADDR: the host "
                            "of rank 0's store");
    }
    w.master_addr = first_host(list_name, env(list_name));
  }
  if (has_env("MASTER_PORT")) {
    w.master_port = checked_port("MASTER_PORT", env_number("MASTER_PORT", 0));
  } else {
    const std::string job = env("SLURM_JOB_ID");
    if (whole_number(job) < 0) {
      if (job.empty()) {
        throw InvalidArgument("a Slurm task (SLURM_PROCID, SLURM_NTASKS) needs SLURM_JOB_ID or MASTER_PORT: the "
                              "port of rank 0's store");
      }
      refuse("SLURM_JOB_ID", job, "is not a whole number");
    }
    w.master_port = 15000 + static_cast<int>(whole_number(job.substr(job.size() > 4 ? job.size() - 4 : 0)));
  }
  w.store_file = env("FEEDLINE_STORE_FILE");
  w.attempt = env_number("SLURM_RESTART_COUNT", 0);
  return w;
}

}  // namespace

std::optional<WorldInfo> world_from_environment() {
  if (!env("WORLD_SIZE").empty()) return from_torchrun_variables();
  if (!env("RANK").empty() || env("SLURM_PROCID").empty() || env("SLURM_NTASKS").empty()) return std::nullopt;
  if (env_number("SLURM_NTASKS", 1) == 1) return std::nullopt;
  return from_slurm_variables();
}

}  // namespace feedline::dist
