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

volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) { g_signal = sig; }

// The launcher's SIGINT and SIGTERM handlers while it runs, and the previous ones put back after.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
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

struct Rank {
  pid_t pid = -1;
  bool running = false;
};

}  // namespace

int launch(const std::vector<std::string>& argv, const LaunchOptions& options,
           const std::function<void(const std::string&)>& log) {
  if (options.nproc < 1) throw InvalidArgument("launch: nproc must be at least 1");
  if (argv.empty()) throw InvalidArgument("launch: no program to run");

  // The rendezvous is a FileStore in a folder of the launcher's, removed when it returns: no port to choose, and
  // the store outlives any rank (a survivor can still ask it who failed).
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = (tmp != nullptr && *tmp != '\0' ? std::string(tmp) : std::string("/tmp")) + "/feedline-job-XXXXXX";
  if (::mkdtemp(folder.data()) == nullptr) {
    throw DistError("launch: cannot make a folder for the rendezvous store in " + folder.substr(0, folder.rfind('/')) +
                    ": " + std::strerror(errno));
  }
  struct RemoveFolder {
    std::string path;
    ~RemoveFolder() { remove_tree(path); }  // not std::filesystem::remove_all(): see feedline/io/file.h
  } remove_folder{folder};
  const std::string store_file = folder + "/store";

  // Everything the children get is made before fork(): between fork and exec only async-signal-safe calls.
  std::vector<std::vector<std::string>> envs;
  for (int64_t r = 0; r < options.nproc; ++r) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv = *e;
      const std::string name = kv.substr(0, kv.find('='));
      if (name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE" || name == "LOCAL_WORLD_SIZE" ||
          name == "MASTER_ADDR" || name == "MASTER_PORT" || name == "TORCHELASTIC_USE_AGENT_STORE" ||
          name == "TORCHELASTIC_RESTART_COUNT" || name == "FEEDLINE_STORE_FILE") {
        continue;
      }
      env.push_back(kv);
    }
    const std::string n = std::to_string(options.nproc), rank = std::to_string(r);
    for (const std::string& kv : {"RANK=" + rank, "LOCAL_RANK=" + rank, "WORLD_SIZE=" + n, "LOCAL_WORLD_SIZE=" + n,
                                  std::string("MASTER_ADDR=127.0.0.1"), "FEEDLINE_STORE_FILE=" + store_file}) {
      env.push_back(kv);
    }
    for (const auto& kv : options.env) env.push_back(kv);
    envs.push_back(std::move(env));
  }
  const auto pointers = [](std::vector<std::string>& v) {
    std::vector<char*> p;
    for (auto& s : v) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
  };
  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs = pointers(args);

  SignalGuard signals;
  const pid_t parent = getpid();
  std::vector<Rank> ranks(static_cast<size_t>(options.nproc));
  const auto signal_all = [&](int sig) {
    for (const auto& r : ranks) {
      if (r.running) kill(r.pid, sig);
    }
  };
  for (size_t r = 0; r < ranks.size(); ++r) {
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
    ranks[r] = {pid, true};
  }

  int result = 0;
  bool failed = false;
  std::optional<Clock::time_point> kill_at;  // when the ranks still running get SIGKILL
  int forwarded = 0;
  size_t running = ranks.size();
  while (running > 0) {
    if (g_signal != 0 && forwarded == 0) {
      forwarded = g_signal;
      signal_all(forwarded);
      if (!failed) result = 128 + forwarded;
      failed = true;
      kill_at = Clock::now() + options.grace;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (size_t r = 0; r < ranks.size(); ++r) {
        if (ranks[r].pid != pid || !ranks[r].running) continue;
        ranks[r].running = false;
        --running;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && !failed) {
          failed = true;
          result = exit_code(status);
          log("rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") " + describe(status) +
              (running > 0 ? "; stopping the other ranks" : ""));
          kill_at = Clock::now() + options.grace;
          // The survivors get a moment to end on their own (they see the failure and say who failed); then
          // SIGTERM, and SIGKILL at kill_at.
          std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(options.grace / 2, 1500ms));
          signal_all(SIGTERM);
        }
      }
      continue;
    }
    if (kill_at && Clock::now() >= *kill_at) {
      signal_all(SIGKILL);
      kill_at.reset();
    }
    std::this_thread::sleep_for(20ms);
  }
  return result;
}

}  // namespace feedline::dist
