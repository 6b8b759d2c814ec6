// Ranks as threads of the test's process: a store of the test's own on a free loopback port, as a launcher hosts
// it, and a body run on every rank at once.
#pragma once

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "dist/tcp_store.h"
#include "feedline/dist/dist.h"

namespace feedline::testing {

// A store on a free loopback port, as a launcher hosts it; the ranks connect to it as clients.
struct TestStore {
  c10::intrusive_ptr<c10d::TCPStore> store;
  TestStore() {
    c10d::TCPStoreOptions o;
    o.port = 0;
    o.isServer = true;
    o.waitWorkers = false;
    dist::detail::classic_tcp_store(o);
    store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
  }
  dist::WorldInfo world(int64_t rank, int64_t size) const {
    dist::WorldInfo w;
    w.rank = rank;
    w.world_size = size;
    w.local_rank = rank;
    w.master_addr = "127.0.0.1";
    w.master_port = store->getPort();
    w.launcher_hosts_store = true;
    return w;
  }
};

// Runs `body(rank)` on `size` threads at once and rethrows the first failure.
inline void on_ranks(int64_t size, const std::function<void(int64_t)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  for (int64_t r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace feedline::testing
