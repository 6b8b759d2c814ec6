#include "feedline/dist/launch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "feedline/dist/dist.h"
#include "feedline/io/file.h"

extern char** environ;

namespace feedline::dist {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The first signal, and how many came.
volatile sig_atomic_t g_signal = 0;
volatile sig_atomic_t g_signals = 0;

void on_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
  g_signals = g_signals + 1;
}

// The launcher's SIGINT and SIGTERM handlers while it runs, and the previous ones put back after.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    g_signals = 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + (name != nullptr ? " (" + std::string(name) + ")" : "");
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exit_code(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

// The rendezvous is a FileStore in a folder of the launcher's, removed when it returns: no port to choose, and
// the store outlives any rank (a survivor can still ask it who failed).
class StoreFolder {
 public:
  StoreFolder() {
    const char* tmp = std::getenv("TMPDIR");
    path_ = (tmp != nullptr && *tmp != '\0' ? std::string(tmp) : std::string("/tmp")) + "/feedline-job-XXXXXX";
    if (::mkdtemp(path_.data()) == nullptr) {
      throw DistError("launch: cannot make a folder for the rendezvous store in " + path_.substr(0, path_.rfind('/')) +
                      ": " + std::strerror(errno));
    }
  }
  ~StoreFolder() { remove_tree(path_); }  // not std::filesystem::remove_all(): see feedline/io/file.h
  StoreFolder(const StoreFolder&) = delete;
  StoreFolder& operator=(const StoreFolder&) = delete;
  std::string store_file() const { return path_ + "/store"; }

 private:
  std::string path_;
};

bool names_a_job(const std::string& name) {
  return name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE" || name == "LOCAL_WORLD_SIZE" ||
         name == "MASTER_ADDR" || name == "MASTER_PORT" || name == "TORCHELASTIC_USE_AGENT_STORE" ||
         name == "TORCHELASTIC_RESTART_COUNT" || name == "FEEDLINE_STORE_FILE";
}

// Each rank's environment: the launcher's less whatever places a process in a job, then torchrun's variables for
// this job and options.env.
std::vector<std::vector<std::string>> rank_environments(const LaunchOptions& options, const std::string& store_file) {
  std::vector<std::string> inherited;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (!names_a_job(kv.substr(0, kv.find('=')))) inherited.push_back(kv);
  }
  std::vector<std::vector<std::string>> envs;
  for (int64_t r = 0; r < options.nproc; ++r) {
    std::vector<std::string> env = inherited;
    const std::string n = std::to_string(options.nproc), rank = std::to_string(r);
    for (const std::string& kv : {"RANK=" + rank, "LOCAL_RANK=" + rank, "WORLD_SIZE=" + n, "LOCAL_WORLD_SIZE=" + n,
                                  std::string("MASTER_ADDR=127.0.0.1"), "FEEDLINE_STORE_FILE=" + store_file}) {
      env.push_back(kv);
    }
    for (const auto& kv : options.env) env.push_back(kv);
    envs.push_back(std::move(env));
  }
  return envs;
}

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (auto& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// The ranks of one launch: started together, watched until every one has ended.
class Ranks {
 public:
  // Starts argv[0] once for each environment. Everything the children get is made before fork(): between fork and
  // exec only async-signal-safe calls.
  Ranks(std::vector<std::string> argv, std::vector<std::vector<std::string>> envs) {
    std::vector<char*> arg_ptrs = pointers(argv);
    const pid_t parent = getpid();
    ranks_.resize(envs.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      std::vector<char*> env_ptrs = pointers(envs[r]);
      const pid_t pid = fork();
      if (pid < 0) {
        signal_all(SIGKILL);
        throw DistError(std::string("launch: cannot start rank ") + std::to_string(r) + ": " + std::strerror(errno));
      }
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // the launcher gone, its ranks go too
        if (getppid() != parent) _exit(127);
        execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
        const char msg[] = "feedline: launch: cannot run the rank's program\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(127);
      }
      ranks_[r] = {pid, true};
    }
    running_ = ranks_.size();
  }

  // Waits for every rank; returns launch()'s result.
  int wait(const LaunchOptions& options, const std::function<void(const std::string&)>& log) {
    while (running_ > 0) {
      if (g_signal != 0 && forwarded_ == 0) forward(g_signal, options);
      if (g_signals > 1 && kill_at_) kill_at_ = Clock::now();  // a second signal: no more waiting
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        ended(pid, status, options, log);
        continue;
      }
      if (kill_at_ && Clock::now() >= *kill_at_) {
        signal_all(SIGKILL);
        kill_at_.reset();
      }
      std::this_thread::sleep_for(20ms);
    }
    return result_;
  }

 private:
  struct Rank {
    pid_t pid = -1;
    bool running = false;
  };

  void signal_all(int sig) {
    for (const auto& r : ranks_) {
      if (r.running) kill(r.pid, sig);
    }
  }

  // A signal sent to the launcher goes on to every rank, which stop after the same step.
  void forward(int sig, const LaunchOptions& options) {
    forwarded_ = sig;
    signal_all(sig);
    if (!failed_) {
      result_ = 128 + sig;
      kill_at_ = Clock::now() + options.stop_grace;
    }
    failed_ = true;
  }

  static bool stopped_on_request(int status) {
    return WIFEXITED(status) && (WEXITSTATUS(status) == 128 + SIGTERM || WEXITSTATUS(status) == 128 + SIGINT);
  }

  void ended(pid_t pid, int status, const LaunchOptions& options, const std::function<void(const std::string&)>& log) {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (ranks_[r].pid != pid || !ranks_[r].running) continue;
      ranks_[r].running = false;
      --running_;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (ok || failed_) continue;
      failed_ = true;
      if (stopped_on_request(status)) {
        // A rank signalled itself: its peers agreed to stop at the same step and are ending too.
        result_ = exit_code(status);
        kill_at_ = Clock::now() + options.stop_grace;
        continue;
      }
      result_ = exit_code(status);
      log("rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") " + describe(status) +
          (running_ > 0 ? "; stopping the other ranks" : ""));
      kill_at_ = Clock::now() + options.grace;
      // The survivors get a moment to end on their own (they see the failure and say who failed); then SIGTERM,
      // and SIGKILL at kill_at_.
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(options.grace / 2, 1500ms));
      signal_all(SIGTERM);
    }
  }

  std::vector<Rank> ranks_;
  size_t running_ = 0;
  int result_ = 0;
  bool failed_ = false;
  int forwarded_ = 0;
  std::optional<Clock::time_point> kill_at_;  // when the ranks still running get SIGKILL
};

}  // namespace

int launch(const std::vector<std::string>& argv, const LaunchOptions& options,
           const std::function<void(const std::string&)>& log) {
  if (options.nproc < 1) throw InvalidArgument("launch: nproc must be at least 1");
  if (argv.empty()) throw InvalidArgument("launch: no program to run");
  const StoreFolder folder;
  auto envs = rank_environments(options, folder.store_file());
  const SignalGuard signals;
  Ranks ranks(argv, std::move(envs));
  return ranks.wait(options, log);
}

}  // namespace feedline::dist
