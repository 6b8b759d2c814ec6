// Two ranks on two "hosts": network namespaces joined by a veth pair, rank 0 hosting the store on its own address.
// The link is cut mid-training: both ranks must end within the dist timeout plus the time to find who is at fault,
// non-zero, each naming the other.
//
// What the ranks need of the network: Gloo binds to the interface GLOO_SOCKET_IFNAME names (without it, Gloo
// resolves the host name, which here gives 127.0.0.1: rank 0 would offer its peer a loopback address and rank 1,
// with no loopback, could not bind at all). Rank 1 runs with its loopback down. Rank 0 cannot: it connects to its
// own store (the store's client, the heartbeat) at its veth address, and Linux delivers a host's packets to its own
// addresses through the loopback device, so with lo down that connection times out. Its namespace gets lo up.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_support.h"
#include "dist/processes.h"

namespace feedline {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ended;
using testing::start;
using testing::torch_program;
using testing::train_args;

std::string ip_program() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// Two network namespaces joined by a veth pair, removed (with the pair) when it goes.
class TwoHosts {
 public:
  explicit TwoHosts(std::string ip) : ip_(std::move(ip)) {
    const std::string id = std::to_string(::getpid());
    host_ = {"flhost" + id + "a", "flhost" + id + "b"};
    link_ = {"flv" + id + "a", "flv" + id + "b"};  // within 15 characters
  }
  ~TwoHosts() {
    for (int h = 0; h < 2; ++h) {
      if (made_[h]) run(ip_ + " netns del " + host_[h]);
    }
    if (linked_) run(ip_ + " link del " + link_[0] + " 2>/dev/null");  // still here if a move failed
  }
  TwoHosts(const TwoHosts&) = delete;
  TwoHosts& operator=(const TwoHosts&) = delete;

  // Makes the namespaces and the link; "" when done, else what failed.
  std::string make() {
    for (int h = 0; h < 2; ++h) {
      if (auto why = run(ip_ + " netns add " + host_[h]); !why.empty()) return why;
      made_[h] = true;
    }
    if (auto why = run(ip_ + " link add " + link_[0] + " type veth peer name " + link_[1]); !why.empty()) return why;
    linked_ = true;
    for (int h = 0; h < 2; ++h) {
      const std::string in = ip_ + " -n " + host_[h];
      for (const std::string& step : {ip_ + " link set " + link_[h] + " netns " + host_[h],
                                      in + " addr add " + address(h) + "/24 dev " + link_[h],
                                      in + " link set " + link_[h] + " up"}) {
        if (auto why = run(step); !why.empty()) return why;
      }
    }
    linked_ = false;  // the pair lives in the namespaces now and goes with them
    // Rank 0's own store connection needs the loopback device (see the top of this file).
    return run(ip_ + " -n " + host_[0] + " link set lo up");
  }
  // Takes host 0's end of the link down: no packet passes either way.
  std::string cut() { return run(ip_ + " -n " + host_[0] + " link set " + link_[0] + " down"); }

  static std::string address(int h) { return "10.77.0." + std::to_string(h + 1); }
  const std::string& host(int h) const { return host_[static_cast<size_t>(h)]; }
  const std::string& link(int h) const { return link_[static_cast<size_t>(h)]; }

 private:
  // Runs a command line; "" when it succeeds, else the command and what it said.
  static std::string run(const std::string& command) {
    const auto r = testing::run_command(command);
    return r.status == 0 ? "" : command + ": " + r.output;
  }
  std::string ip_;
  std::vector<std::string> host_, link_;
  bool made_[2] = {false, false};
  bool linked_ = false;
};

// The line of `text` that holds "error", or all of it.
std::string error_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("error: ") != std::string::npos) return line;
  }
  return text;
}

TEST(TwoHosts, CuttingTheLinkEndsBothRanksInTimeEachNamingTheOther) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  const std::string ip = ip_program();
  if (ip.empty()) GTEST_SKIP() << "the ip tool (iproute2) is missing";
  TwoHosts hosts(ip);
  if (const std::string why = hosts.make(); !why.empty()) GTEST_SKIP() << "cannot make two network namespaces: " << why;

  const std::string idx = testing::prepared("two_hosts", 2000, 100);
  constexpr int kTimeout = 10;
  std::vector<std::unique_ptr<testing::Child>> ranks;
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> args = {ip, "netns", "exec", hosts.host(r)};
    const auto train = train_args(torch_program(), idx, 1000);
    args.insert(args.end(), train.begin(), train.end());
    args.insert(args.end(), {"--dist-timeout", std::to_string(kTimeout)});
    ranks.push_back(start(args,
                          {"RANK=" + std::to_string(r), "WORLD_SIZE=2", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1",
                           "MASTER_ADDR=" + TwoHosts::address(0), "MASTER_PORT=29500",
                           "GLOO_SOCKET_IFNAME=" + hosts.link(r)},
                          idx + "/rank" + std::to_string(r) + ".out"));
  }
  // Mid-training: the first epoch done, the second under way.
  ASSERT_TRUE(ranks[0]->wait_for_output("Epoch 1/", 120s)) << ranks[0]->output() << "\n" << ranks[1]->output();
  ASSERT_EQ(hosts.cut(), "");
  const auto cut = Clock::now();

  // A collective's timeout, then up to a few seconds to find the rank at fault (its heartbeat, the store).
  const auto limit = std::chrono::seconds(kTimeout + 15);
  for (int r = 0; r < 2; ++r) {
    const auto status = ranks[static_cast<size_t>(r)]->wait_for(limit + 5s);
    const std::string out = ranks[static_cast<size_t>(r)]->output();
    ASSERT_TRUE(status.has_value()) << "rank " << r << " still runs " << (limit + 5s).count() << " s after the cut\n"
                                    << out;
    EXPECT_LT(Clock::now() - cut, limit) << "rank " << r << "\n" << out;
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << "rank " << r << " " << ended(status) << "\n"
                                                                 << out;
  }
  const std::string error0 = error_line(ranks[0]->output()), error1 = error_line(ranks[1]->output());
  EXPECT_NE(error0.find("rank 1"), std::string::npos) << error0;
  EXPECT_TRUE(error1.find("rank 0") != std::string::npos || error1.find("store") != std::string::npos) << error1;
}

}  // namespace
}  // namespace feedline
