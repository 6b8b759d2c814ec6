// world_from_environment: torchrun's, the --nproc launcher's, a hand-set and Slurm's environments, each set in this
// process (every variable that places a process in a job cleared first) and put back after.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dist/dist.h"

namespace feedline {
namespace {

// Every variable world_from_environment reads, and the hand-off to the next one.
const char* const kJobVariables[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_RUN_ID", "FEEDLINE_STORE_FILE",
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE", "SLURM_NODELIST", "SLURM_JOB_NODELIST", "SLURM_JOB_ID", "SLURM_JOB_NUM_NODES",
    "SLURM_NNODES", "SLURM_RESTART_COUNT"};

// Clears every job variable, then sets `vars`; puts the process's environment back when it goes.
class JobEnvironment {
 public:
  using Vars = std::vector<std::pair<std::string, std::string>>;
  explicit JobEnvironment(const Vars& vars) {
    for (const char* name : kJobVariables) {
      const char* old = ::getenv(name);
      saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
      ::unsetenv(name);
    }
    for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~JobEnvironment() {
    for (const auto& [k, v] : saved_) {
      if (v) {
        ::setenv(k.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
  }
  JobEnvironment(const JobEnvironment&) = delete;
  JobEnvironment& operator=(const JobEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

dist::WorldInfo world_of(const JobEnvironment::Vars& vars) {
  JobEnvironment env(vars);
  const auto w = dist::world_from_environment();
  if (!w) throw std::runtime_error("no world from this environment");
  return *w;
}

// The message of the InvalidArgument that `vars` leads to, or a line saying there was none.
std::string refusal_of(const JobEnvironment::Vars& vars) {
  JobEnvironment env(vars);
  try {
    dist::world_from_environment();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(taken without an error)";
}

const JobEnvironment::Vars kSlurmTask = {{"SLURM_PROCID", "5"},     {"SLURM_NTASKS", "8"},
                                         {"SLURM_LOCALID", "1"},    {"SLURM_NODEID", "1"},
                                         {"SLURM_JOB_ID", "4871234"}, {"SLURM_NODELIST", "node[03-05,09]"},
                                         {"SLURM_TASKS_PER_NODE", "4(x2)"}};

JobEnvironment::Vars with(JobEnvironment::Vars vars, const JobEnvironment::Vars& more) {
  for (const auto& [k, v] : more) {
    bool replaced = false;
    for (auto& kv : vars) {
      if (kv.first == k) {
        kv.second = v;
        replaced = true;
      }
    }
    if (!replaced) vars.emplace_back(k, v);
  }
  return vars;
}

TEST(Environment, NoJobVariablesMeanOneProcess) {
  JobEnvironment env({});
  EXPECT_FALSE(dist::world_from_environment().has_value());
}

TEST(Environment, TorchrunsVariablesAreRead) {
  const auto w = world_of({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                           {"GROUP_RANK", "1"}, {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "29555"},
                           {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"},
                           {"TORCHELASTIC_RUN_ID", "none"}});
  EXPECT_EQ(w.rank, 5);
  EXPECT_EQ(w.world_size, 8);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.local_world_size, 4);
  EXPECT_EQ(w.group_rank, 1);
  EXPECT_EQ(w.launcher, "torchrun");
  EXPECT_EQ(w.master_addr, "10.0.0.7");
  EXPECT_EQ(w.master_port, 29555);
  EXPECT_TRUE(w.launcher_hosts_store);
  EXPECT_EQ(w.attempt, 2);
  EXPECT_TRUE(w.store_file.empty());
}

TEST(Environment, TheLauncherIsNamedByItsVariables) {
  const JobEnvironment::Vars base = {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                                     {"MASTER_PORT", "29501"}};
  EXPECT_EQ(world_of(with(base, {{"TORCHELASTIC_RUN_ID", "abc"}})).launcher, "torchrun");
  EXPECT_EQ(world_of(with(base, {{"GROUP_RANK", "0"}})).launcher, "torchrun");
  const auto by_hand = world_of(base);
  EXPECT_EQ(by_hand.launcher, "environment");
  EXPECT_FALSE(by_hand.launcher_hosts_store);
  EXPECT_EQ(by_hand.local_rank, 1);       // LOCAL_RANK unset: the rank
  EXPECT_EQ(by_hand.local_world_size, 2);  // LOCAL_WORLD_SIZE unset: the world
  EXPECT_EQ(by_hand.group_rank, 0);
  EXPECT_EQ(by_hand.attempt, 0);
  const auto nproc = world_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "2"},
                               {"MASTER_ADDR", "127.0.0.1"}, {"FEEDLINE_STORE_FILE", "/tmp/job/store"}});
  EXPECT_EQ(nproc.launcher, "feedline --nproc");
  EXPECT_EQ(nproc.store_file, "/tmp/job/store");
}

TEST(Environment, TorchrunsBadValuesAreRefusedByName) {
  const JobEnvironment::Vars base = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                                     {"MASTER_PORT", "29501"}};
  EXPECT_NE(refusal_of(with(base, {{"WORLD_SIZE", "two"}})).find("WORLD_SIZE='two'"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"RANK", "-1"}})).find("RANK='-1'"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"RANK", "2"}})).find("RANK=2 is outside [0, WORLD_SIZE=2)"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"MASTER_PORT", "70000"}})).find("MASTER_PORT='70000'"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"MASTER_PORT", "29x"}})).find("MASTER_PORT='29x'"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"LOCAL_WORLD_SIZE", "3"}})).find("LOCAL_WORLD_SIZE='3'"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"LOCAL_WORLD_SIZE", "1"}, {"LOCAL_RANK", "1"}}))
                .find("LOCAL_RANK=1 is outside [0, LOCAL_WORLD_SIZE=1)"),
            std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"GROUP_RANK", "x"}})).find("GROUP_RANK='x'"), std::string::npos);
  EXPECT_NE(refusal_of(with(base, {{"TORCHELASTIC_RESTART_COUNT", "1.5"}})).find("TORCHELASTIC_RESTART_COUNT='1.5'"),
            std::string::npos);
  const std::string no_store = refusal_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  EXPECT_NE(no_store.find("MASTER_ADDR and MASTER_PORT"), std::string::npos) << no_store;
}

TEST(Environment, SlurmsVariablesAreRead) {
  const auto w = world_of(kSlurmTask);
  EXPECT_EQ(w.launcher, "slurm");
  EXPECT_EQ(w.rank, 5);
  EXPECT_EQ(w.world_size, 8);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.group_rank, 1);
  EXPECT_EQ(w.local_world_size, 4);
  EXPECT_EQ(w.master_addr, "node03");
  EXPECT_EQ(w.master_port, 15000 + 1234);
  EXPECT_FALSE(w.launcher_hosts_store);
  EXPECT_EQ(w.attempt, 0);
  EXPECT_EQ(world_of(with(kSlurmTask, {{"SLURM_RESTART_COUNT", "3"}})).attempt, 3);
}

TEST(Environment, SlurmsFirstHostComesFromTheCompressedNodeList) {
  const auto host_of = [](const std::string& list) {
    return world_of(with(kSlurmTask, {{"SLURM_NODELIST", list}})).master_addr;
  };
  EXPECT_EQ(host_of("node[03-05,09]"), "node03");
  EXPECT_EQ(host_of("node[09,03-05]"), "node09");
  EXPECT_EQ(host_of("a1,a2"), "a1");
  EXPECT_EQ(host_of("gpu-[1-2]x,b"), "gpu-1x");
  EXPECT_EQ(host_of("rack[2-3]-n[007,010]"), "rack2-n007");
  EXPECT_EQ(host_of("single"), "single");
  // SLURM_JOB_NODELIST where SLURM_NODELIST is unset; MASTER_ADDR over both.
  JobEnvironment::Vars job_list;
  for (const auto& kv : kSlurmTask) {
    if (kv.first != "SLURM_NODELIST") job_list.push_back(kv);
  }
  job_list.emplace_back("SLURM_JOB_NODELIST", "cn[7-8]");
  EXPECT_EQ(world_of(job_list).master_addr, "cn7");
  EXPECT_EQ(world_of(with(kSlurmTask, {{"MASTER_ADDR", "10.1.2.3"}})).master_addr, "10.1.2.3");
}

TEST(Environment, SlurmsPortComesFromTheJobUnlessMasterPortIsSet) {
  EXPECT_EQ(world_of(with(kSlurmTask, {{"SLURM_JOB_ID", "987"}})).master_port, 15987);
  EXPECT_EQ(world_of(with(kSlurmTask, {{"SLURM_JOB_ID", "120009"}})).master_port, 15009);
  EXPECT_EQ(world_of(with(kSlurmTask, {{"MASTER_PORT", "29400"}})).master_port, 29400);
}

TEST(Environment, SlurmsTasksOnThisHostComeFromTheCounts) {
  const auto local_of = [](const JobEnvironment::Vars& more) {
    return world_of(with(kSlurmTask, more)).local_world_size;
  };
  EXPECT_EQ(local_of({{"SLURM_TASKS_PER_NODE", "4(x2),3"}, {"SLURM_NODEID", "1"}, {"SLURM_NTASKS", "11"}}), 4);
  EXPECT_EQ(local_of({{"SLURM_TASKS_PER_NODE", "4(x2),3"}, {"SLURM_NODEID", "2"}, {"SLURM_NTASKS", "11"}}), 3);
  EXPECT_EQ(local_of({{"SLURM_TASKS_PER_NODE", "2,6"}, {"SLURM_NODEID", "1"}}), 6);
  // SLURM_NTASKS_PER_NODE over SLURM_TASKS_PER_NODE.
  EXPECT_EQ(local_of({{"SLURM_NTASKS_PER_NODE", "2"}, {"SLURM_TASKS_PER_NODE", "4(x2)"}, {"SLURM_LOCALID", "0"}}), 2);
}

TEST(Environment, SlurmsBadValuesAreRefusedByName) {
  const auto refusal = [](const JobEnvironment::Vars& more) { return refusal_of(with(kSlurmTask, more)); };
  EXPECT_NE(refusal({{"SLURM_PROCID", "8"}}).find("SLURM_PROCID=8 is outside [0, SLURM_NTASKS=8)"),
            std::string::npos);
  EXPECT_NE(refusal({{"SLURM_NTASKS", "eight"}}).find("SLURM_NTASKS='eight'"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_NODELIST", "node[03-05"}}).find("SLURM_NODELIST='node[03-05'"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_NODELIST", "node[a-b]"}}).find("SLURM_NODELIST='node[a-b]'"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_TASKS_PER_NODE", "4(x2"}}).find("SLURM_TASKS_PER_NODE='4(x2'"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_TASKS_PER_NODE", "4(y2)"}}).find("SLURM_TASKS_PER_NODE='4(y2)'"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_TASKS_PER_NODE", "4"}}).find("SLURM_NODEID=1"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_LOCALID", "4"}}).find("SLURM_LOCALID=4"), std::string::npos);
  EXPECT_NE(refusal({{"SLURM_JOB_ID", "x12"}}).find("SLURM_JOB_ID='x12'"), std::string::npos);
  JobEnvironment::Vars no_list, no_job;
  for (const auto& kv : kSlurmTask) {
    if (kv.first != "SLURM_NODELIST") no_list.push_back(kv);
    if (kv.first != "SLURM_JOB_ID") no_job.push_back(kv);
  }
  EXPECT_NE(refusal_of(no_list).find("SLURM_NODELIST or MASTER_ADDR"), std::string::npos) << refusal_of(no_list);
  EXPECT_NE(refusal_of(no_job).find("SLURM_JOB_ID or MASTER_PORT"), std::string::npos) << refusal_of(no_job);
}

TEST(Environment, TorchrunsVariablesWinOverSlurmsAndOneSlurmTaskIsOneProcess) {
  // torchrun started under srun: its own variables place the process.
  const auto w = world_of(with(kSlurmTask, {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                                            {"MASTER_PORT", "29501"}, {"TORCHELASTIC_RUN_ID", "x"}}));
  EXPECT_EQ(w.launcher, "torchrun");
  EXPECT_EQ(w.world_size, 2);
  JobEnvironment one(with(kSlurmTask, {{"SLURM_NTASKS", "1"}, {"SLURM_PROCID", "0"}}));
  EXPECT_FALSE(dist::world_from_environment().has_value());
}

}  // namespace
}  // namespace feedline
