#!/usr/bin/python3
"""A shaped network link for `feedline bench remote`: a network namespace of its own, joined to this one by a veth
pair whose two ends are shaped by tbf (a rate and a burst), and a TCP relay for each upstream that listens on the
namespace's end of the pair and forwards to the upstream on this namespace's loopback. What a client sends to a
relay and what it gets back crosses the pair, so it is shaped both ways; the servers behind stay where they are.

  shaped_link.py --upstream 127.0.0.1:PORT [--upstream ...] [--rate 1gbit] [--burst 256kb]

Prints one JSON line once ready, {"address": "10.A.B.2", "ports": [P1, ...], "device": "..."} (the ports in
--upstream order), then relays until its standard input ends (whoever started it has stopped or died), SIGTERM or
SIGINT. Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN). The namespace is held by this process alone (a descriptor and
the relays' sockets), so when it exits the namespace goes, and the pair and its shaping with it: nothing is left
behind, whatever ended it.

Per-request latency is not added here (the kernel may lack netem): put fault_proxy.py's delay behind the relay.
"""

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading

CLONE_NEWNET = 0x40000000
CHUNK = 1 << 20
_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def setns(fd):
    # Python 3.11 has no os.setns. A network namespace is a thread's: only the calling thread moves.
    _check(_libc.setns(fd, CLONE_NEWNET), "setns")


def run(argv):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.decode(errors='replace').strip()}")


def pump(src, dst):
    """Copies src to dst until src ends, then passes the end on."""
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    try:
        while True:
            n = src.recv_into(buf)
            if n == 0:
                break
            dst.sendall(view[:n])
    except OSError:
        pass
    for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
        try:
            s.shutdown(how)
        except OSError:
            pass


def relay(conn, upstream):
    try:
        up = socket.create_connection(upstream)
    except OSError:
        conn.close()
        return
    for s in (conn, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = threading.Thread(target=pump, args=(up, conn), daemon=True)
    t.start()
    pump(conn, up)
    t.join()
    conn.close()
    up.close()


def serve(listener, upstream):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=relay, args=(conn, upstream), daemon=True).start()


def parse_upstream(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host, int(port)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", action="append", type=parse_upstream, required=True,
                        help="HOST:PORT on this side to relay to (repeatable: one relay each)")
    parser.add_argument("--rate", default="1gbit", help="tbf rate of each direction (tc's units)")
    parser.add_argument("--burst", default="256kb", help="tbf burst (tc's units)")
    parser.add_argument("--latency", default="50ms", help="tbf's queue bound, as the time a packet may wait")
    args = parser.parse_args(argv)

    # Names and addresses of this process's own, so that several links can exist at once.
    pid = os.getpid()
    host_dev, ns_dev = f"flb{pid}h", f"flb{pid}n"
    net = f"10.{200 + pid % 50}.{(pid // 50) % 256}"
    host_addr, ns_addr = f"{net}.1", f"{net}.2"

    root_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    _check(_libc.unshare(CLONE_NEWNET), "unshare")  # single-threaded still: the whole process moves
    ns_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    setns(root_fd)
    ns_path = f"/proc/{pid}/fd/{ns_fd}"
    enter = ["nsenter", f"--net={ns_path}", "--"]
    listeners = []
    try:
        run(["ip", "link", "add", host_dev, "type", "veth", "peer", "name", ns_dev, "netns", ns_path])
        run(["ip", "addr", "add", f"{host_addr}/30", "dev", host_dev])
        run(["ip", "link", "set", host_dev, "up"])
        run([*enter, "ip", "link", "set", "lo", "up"])
        run([*enter, "ip", "addr", "add", f"{ns_addr}/30", "dev", ns_dev])
        run([*enter, "ip", "link", "set", ns_dev, "up"])
        tbf = ["root", "tbf", "rate", args.rate, "burst", args.burst, "latency", args.latency]
        run(["tc", "qdisc", "add", "dev", host_dev, *tbf])
        run([*enter, "tc", "qdisc", "add", "dev", ns_dev, *tbf])
        setns(ns_fd)
        try:
            for _ in args.upstream:
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((ns_addr, 0))
                s.listen(128)
                listeners.append(s)
        finally:
            setns(root_fd)
    except (OSError, RuntimeError) as e:
        print(f"shaped_link.py: {e}", file=sys.stderr, flush=True)
        subprocess.run(["ip", "link", "del", host_dev], stderr=subprocess.DEVNULL)  # none left half made
        return 1
    # The relays' threads start here, in this namespace, so their upstream connections are made on this side.
    for s, upstream in zip(listeners, args.upstream):
        threading.Thread(target=serve, args=(s, upstream), daemon=True).start()
    print(json.dumps({"address": ns_addr, "ports": [s.getsockname()[1] for s in listeners], "device": host_dev,
                      "rate": args.rate}), flush=True)

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())

    def until_stdin_ends():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        stopping.set()

    threading.Thread(target=until_stdin_ends, daemon=True).start()
    stopping.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
