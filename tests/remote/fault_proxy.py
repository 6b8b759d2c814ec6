#!/usr/bin/python3
"""A reverse proxy for tests: forwards HTTP/1.1 requests to one upstream unchanged and injects faults on demand.

Requests go through byte for byte in their headers (the Host header too, which S3 signatures cover); bodies are
streamed in large chunks both ways, so big objects move at loopback speed. Client connections are kept alive; each
holds one upstream connection of its own.

Control API, under /__proxy (never forwarded):
  POST /__proxy/faults   a JSON list of rules, appended to those still pending. A rule matches on any of
                         "method", "path" (substring), "query" (substring), "range" (true: only requests with a
                         Range header; false: only without), applies to "times" matching requests (default 1; -1 for
                         every one) and does one "action":
                           status        answer "status" with "headers" and "body" without asking the upstream
                           cut           forward, send the status, headers and "after_bytes" body bytes, then close
                           stall         hold the request "seconds", then forward it
                           ignore_range  forward without the Range header: the client gets the whole object
                           lie_length    forward, announce "content_length" as Content-Length, send the real body,
                                         then close
                           reset         close at once without an answer (an RST: SO_LINGER 0)
  GET  /__proxy/faults   the rules still pending, with the "times" they have left
  GET  /__proxy/log      the requests seen since the last reset, in the order they came: method, path, query,
                         range, status, bytes (body bytes sent to the client), fault (the action applied, or null),
                         done (false while the proxy is still at it; status and bytes are final once true)
  POST /__proxy/reset    clears the rules, the log and the delay
  POST /__proxy/delay    {"ms": N}: wait that long before forwarding each request

Run alone: fault_proxy.py --upstream http://127.0.0.1:8080 [--port 0] [--port-file FILE]
From Python tests: control(servers["proxy"]["s3"]["control"], "faults", [...]) and the like.
"""

import argparse
import http.client
import http.server
import json
import os
import select
import socket
import struct
import sys
import threading
import time
import urllib.parse

CONTROL_PREFIX = "/__proxy"
# Large enough that a loopback transfer costs few system calls per megabyte.
CHUNK = 1 << 20
ACTIONS = ("status", "cut", "stall", "ignore_range", "lie_length", "reset")


class Faults:
    """The pending rules, the request log and the delay, shared by every connection's thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._rules = []
        self._log = []
        self._delay_ms = 0

    def add(self, rules):
        if not isinstance(rules, list):
            raise ValueError("the body must be a JSON list of rules")
        checked = []
        for rule in rules:
            if not isinstance(rule, dict) or rule.get("action") not in ACTIONS:
                raise ValueError(f"a rule needs an action among {', '.join(ACTIONS)}: {rule!r}")
            rule = dict(rule)
            rule["times"] = int(rule.get("times", 1))
            checked.append(rule)
        with self._lock:
            self._rules.extend(checked)
            return len(self._rules)

    def take(self, method, path, query, has_range):
        """The first pending rule that matches this request, counted as used; None when none does."""
        with self._lock:
            for rule in self._rules:
                if rule["times"] == 0:
                    continue
                if "method" in rule and rule["method"].upper() != method.upper():
                    continue
                if "path" in rule and rule["path"] not in path:
                    continue
                if "query" in rule and rule["query"] not in query:
                    continue
                if "range" in rule and bool(rule["range"]) != has_range:
                    continue
                if rule["times"] > 0:
                    rule["times"] -= 1
                return dict(rule)
            return None

    def pending(self):
        with self._lock:
            return [dict(r) for r in self._rules if r["times"] != 0]

    def begin(self, entry):
        """Logs a request as it arrives, so the log keeps the order of arrival; finish() completes its entry."""
        with self._lock:
            entry["done"] = False
            self._log.append(entry)

    def finish(self, entry):
        with self._lock:
            entry["done"] = True

    def log(self):
        with self._lock:
            return [dict(e) for e in self._log]

    def set_delay(self, ms):
        with self._lock:
            self._delay_ms = max(0, int(ms))

    def delay_seconds(self):
        with self._lock:
            return self._delay_ms / 1000.0

    def reset(self):
        with self._lock:
            self._rules.clear()
            self._log.clear()
            self._delay_ms = 0


class ClientGone(Exception):
    """The client closed its connection while the proxy was writing to it."""


class UpstreamStoppedReading(ConnectionError):
    """The upstream closed its connection while the proxy was sending it a request body."""


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault-proxy"

    _upstream = None

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self):
        self._drop_upstream()
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        if self.server.verbose:
            super().log_message(format, *args)

    def _handle(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == CONTROL_PREFIX or url.path.startswith(CONTROL_PREFIX + "/"):
            self._control(url.path[len(CONTROL_PREFIX):])
            return
        rule = self.server.faults.take(self.command, url.path, url.query, "Range" in self.headers)
        entry = {"method": self.command, "path": url.path, "query": url.query, "range": self.headers.get("Range"),
                 "status": None, "bytes": 0, "fault": rule["action"] if rule else None}
        self.server.faults.begin(entry)
        try:
            self._proxy(rule, entry)
        except ClientGone:
            self.close_connection = True
        except (OSError, http.client.HTTPException) as e:
            self.close_connection = True
            self._drop_upstream()
            entry["error"] = f"{type(e).__name__}: {e}"
            if entry["status"] is None:
                self._answer_quietly(502, f"fault proxy: upstream failed: {e}\n")
                entry["status"] = 502
        finally:
            self.server.faults.finish(entry)

    def _proxy(self, rule, entry):
        action = rule["action"] if rule else None
        if action == "reset":
            self._reset_connection()
            return
        delay = self.server.faults.delay_seconds()
        if delay:
            time.sleep(delay)
        if action == "stall":
            time.sleep(float(rule.get("seconds", 1)))
        if action == "status":
            self._discard_request_body()
            self._send_status_fault(rule, entry)
            return

        headers = list(self.headers.items())
        if action == "ignore_range":
            headers = [(k, v) for k, v in headers if k.lower() != "range"]
        upstream = self._upstream_connection()
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in headers:
            upstream.putheader(k, v)
        upstream.endheaders()
        try:
            self._forward_request_body(upstream)
        except UpstreamStoppedReading as e:
            # The upstream answered before taking the whole body (an error, say): that answer goes to the client,
            # whose connection is then out of step and closed.
            self.close_connection = True
            try:
                response = upstream.getresponse()
            except (OSError, http.client.HTTPException):
                raise e from None
        else:
            response = upstream.getresponse()
        self._relay_response(response, rule, entry)

    # The request's body, from the client to the upstream.

    def _forward_request_body(self, upstream):
        def send(data):
            try:
                upstream.send(data)
            except OSError as e:
                raise UpstreamStoppedReading(str(e)) from e

        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            # The chunks' framing goes through as it came.
            while True:
                line = self.rfile.readline(65537)
                send(line)
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        trailer = self.rfile.readline(65537)
                        send(trailer)
                        if trailer in (b"\r\n", b"\n", b""):
                            return
                self._copy_exact(self.rfile, send, size + 2)
        length = int(self.headers.get("Content-Length") or 0)
        self._copy_exact(self.rfile, send, length)

    def _discard_request_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline(65537).split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return
                self.rfile.read(size + 2)
        self._copy_exact(self.rfile, lambda _: None, int(self.headers.get("Content-Length") or 0))

    @staticmethod
    def _copy_exact(reader, write, length):
        buf = bytearray(min(CHUNK, max(length, 1)))
        view = memoryview(buf)
        while length > 0:
            n = reader.readinto(view[:min(length, len(buf))])
            if not n:
                raise ConnectionError("the client closed the connection inside a request body")
            write(view[:n])
            length -= n

    # The response, from the upstream to the client.

    def _relay_response(self, response, rule, entry):
        action = rule["action"] if rule else None
        chunked = response.chunked
        headers = response.getheaders()
        if action == "lie_length" or (action == "cut" and chunked):
            headers = [(k, v) for k, v in headers
                       if k.lower() not in ("content-length", "transfer-encoding")]
            length = rule.get("content_length") if action == "lie_length" else response.length
            if length is not None:
                headers.append(("Content-Length", str(int(length))))
            chunked = False
        limit = int(rule.get("after_bytes", 0)) if action == "cut" else None

        self._write_head(response.status, response.reason, headers)
        entry["status"] = response.status
        upstream_closes = response.will_close
        sent = self._relay_body(response, chunked, limit)
        entry["bytes"] = sent
        if action in ("cut", "lie_length"):
            self._drop_upstream()
            self._close_after_flush()
            return
        if upstream_closes or (response.getheader("Connection", "").lower() == "close"):
            self._drop_upstream()
            self.close_connection = True

    def _relay_body(self, response, chunked, limit):
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        sent = 0
        while limit is None or sent < limit:
            want = len(buf) if limit is None else min(len(buf), limit - sent)
            if chunked:
                data = response.read1(want)
                n = len(data)
                if n:
                    self._write(b"%x\r\n" % n + data + b"\r\n")
            else:
                n = response.readinto(view[:want])
                if n:
                    self._write(view[:n])
            if not n:
                break
            sent += n
        if chunked and limit is None:
            self._write(b"0\r\n\r\n")
        return sent

    def _write_head(self, status, reason, headers):
        lines = [f"HTTP/1.1 {status} {reason}\r\n"]
        lines += [f"{k}: {v}\r\n" for k, v in headers]
        lines.append("\r\n")
        self._write("".join(lines).encode("latin-1"))

    def _write(self, data):
        try:
            self.wfile.write(data)
        except OSError as e:
            raise ClientGone() from e

    # Faults that never reach the upstream.

    def _send_status_fault(self, rule, entry):
        status = int(rule.get("status", 503))
        body = rule.get("body", "")
        body = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        headers = [(k, str(v)) for k, v in (rule.get("headers") or {}).items()
                   if k.lower() not in ("content-length", "transfer-encoding")]
        if body and not any(k.lower() == "content-type" for k, _ in headers):
            headers.append(("Content-Type", "application/xml"))
        headers.append(("Content-Length", str(len(body))))
        reason = http.server.BaseHTTPRequestHandler.responses.get(status, ("Fault",))[0]
        self._write_head(status, reason, headers)
        if self.command != "HEAD":
            self._write(body)
            entry["bytes"] = len(body)
        entry["status"] = status

    def _reset_connection(self):
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _close_after_flush(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _answer_quietly(self, status, text):
        try:
            body = text.encode()
            self._write_head(status, "Bad Gateway", [("Content-Type", "text/plain"),
                                                     ("Content-Length", str(len(body))),
                                                     ("Connection", "close")])
            self._write(body)
        except ClientGone:
            pass

    # The upstream connection, one per client connection, opened on first use.

    def _upstream_connection(self):
        # An idle upstream connection the upstream has closed reads as ready (EOF): open a fresh one rather than
        # fail the request on it.
        if self._upstream is not None:
            sock = self._upstream.sock
            if sock is None or select.select([sock], [], [], 0)[0]:
                self._drop_upstream()
        if self._upstream is None:
            host, port = self.server.upstream
            self._upstream = http.client.HTTPConnection(host, port, timeout=self.server.upstream_timeout)
            self._upstream.connect()
            self._upstream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._upstream

    def _drop_upstream(self):
        if self._upstream is not None:
            self._upstream.close()
            self._upstream = None

    # The control API.

    def _control(self, what):
        faults = self.server.faults
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw.strip() else None
            if self.command == "POST" and what == "/faults":
                result = {"pending": faults.add(body if body is not None else [])}
            elif self.command == "GET" and what == "/faults":
                result = faults.pending()
            elif self.command == "GET" and what == "/log":
                result = faults.log()
            elif self.command == "POST" and what == "/reset":
                faults.reset()
                result = {"reset": True}
            elif self.command == "POST" and what == "/delay":
                faults.set_delay((body or {}).get("ms", 0))
                result = {"ms": int((body or {}).get("ms", 0))}
            else:
                self._control_answer(404, {"error": f"no control {self.command} {CONTROL_PREFIX}{what}"})
                return
        except (ValueError, TypeError, AttributeError) as e:
            self._control_answer(400, {"error": str(e)})
            return
        self._control_answer(200, result)

    def _control_answer(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


# Every method goes through one handler: the proxy does not care which it is.
for _method in ("GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS", "PATCH"):
    setattr(ProxyHandler, "do_" + _method, ProxyHandler._handle)


class ProxyServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, port, upstream, verbose=False, upstream_timeout=300):
        super().__init__(("127.0.0.1", port), ProxyHandler)
        url = urllib.parse.urlsplit(upstream)
        if url.scheme != "http" or not url.hostname:
            raise ValueError(f"the upstream must be an http:// URL: {upstream}")
        self.upstream = (url.hostname, url.port or 80)
        self.upstream_timeout = upstream_timeout
        self.faults = Faults()
        self.verbose = verbose


def control(control_url, what, value=None):
    """One call to a running proxy's control API, for Python tests: control(url, "faults", [rules]),
    control(url, "log"), control(url, "faults"), control(url, "reset"), control(url, "delay", {"ms": 20}).
    control_url is servers.json's proxy.<target>.control; the answer comes back parsed."""
    import urllib.request

    post = value is not None or what in ("reset",)
    data = json.dumps(value if value is not None else {}).encode() if post else None
    request = urllib.request.Request(f"{control_url}/{what}", data=data, method="POST" if post else "GET",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def main(argv=None):
    parser = argparse.ArgumentParser(description="A reverse proxy that injects faults, for tests.")
    parser.add_argument("--upstream", required=True, help="http://HOST:PORT to forward to")
    parser.add_argument("--port", type=int, default=0, help="loopback port to listen on (0: any free one)")
    parser.add_argument("--port-file", help="write the port here once listening (written whole, then renamed)")
    parser.add_argument("--verbose", action="store_true", help="log each request on stderr")
    args = parser.parse_args(argv)

    server = ProxyServer(args.port, args.upstream, verbose=args.verbose)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(f"fault proxy on http://127.0.0.1:{port} -> {args.upstream}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
