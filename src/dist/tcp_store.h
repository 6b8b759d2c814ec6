// TCPStore's classic server and client, in every LibTorch: 2.4 and later default to a libuv one, which builds
// without libuv (Debian's) refuse at run time. Private to feedline (the process group and its tests).
#pragma once

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace feedline::dist::detail {

// The overload chosen at compile time turns the libuv choice off where the field exists.
template <class O>
auto turn_off_libuv(O& options, int) -> decltype(options.useLibUV = false, void()) {
  options.useLibUV = false;
}
template <class O>
void turn_off_libuv(O&, long) {}

// Sets `options` to the classic TCPStore, whichever LibTorch this is.
inline void classic_tcp_store(c10d::TCPStoreOptions& options) { turn_off_libuv(options, 0); }

}  // namespace feedline::dist::detail
