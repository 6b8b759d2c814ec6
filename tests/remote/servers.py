#!/usr/bin/python3
"""Test servers on loopback for the remote-source tests, started on free ports and stopped again.

  servers.py up --dir DIR [--s3] [--http] [--proxy s3|http ...] [--detach] [--max-seconds N]
  servers.py down --dir DIR

s3     Ceph's S3 gateway (radosgw) over a one-node cluster (one monitor, one OSD on memstore) of its own: the
       real thing, which checks SigV4 signatures as AWS does. A user with the keys in servers.json.
http   nginx serving the files put under "root", over HTTP and over HTTPS with a certificate from a CA made here
       ("ca_file", for CURL_CA_BUNDLE / AWS_CA_BUNDLE). Byte ranges and ETags are nginx's own.
proxy  fault_proxy.py in front of the S3 gateway or nginx: passes requests through, injects faults on demand.

`up` writes DIR/servers.json (whole, by rename) once every server answers and prints one line saying how long that
took. In the foreground it runs until SIGTERM, SIGINT or the end of its stdin (when that is a pipe or a terminal),
then stops every server and removes their state; the logs stay in DIR/logs. With --detach it returns once the
servers answer (or fails, naming the server and the end of its log) and keeps them running in the background
until `down`, a signal, or --max-seconds. Every server is a child in its own process group, killed with its
supervisor (PR_SET_PDEATHSIG through setpriv), so no server outlives the process that started it.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON = "/usr/bin/python3"
ACCESS_KEY = "FEEDLINETESTACCESS01"
REGION = "us-east-1"
STATE = "servers.json"
PID_FILE = "servers.pid"
LOGS = "logs"


class StartError(Exception):
    """A server that did not come up: its name, why, and the end of its log."""

    def __init__(self, server, message, log=None):
        self.server = server
        self.log = log
        tail = log_tail(log) if log else ""
        super().__init__(f"{server}: {message}" + (f"\n--- end of {log} ---\n{tail}" if tail else ""))

    def port_in_use(self):
        text = str(self)
        return "Address already in use" in text or "EADDRINUSE" in text


class Stopped(Exception):
    """A stop was asked for while the servers were starting."""


def log_tail(path, lines=30):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return ""


def free_port():
    # The kernel's pick, released for the server to bind: another process could take it in between, which is why
    # a start that fails on a busy port is tried again with new ports.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A server process in its own process group, with its output in a log file."""

    def __init__(self, name, argv, log, env=None, cwd=None):
        self.name, self.argv, self.log, self.env, self.cwd = name, argv, Path(log), env, cwd
        self.proc = None

    def start(self):
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--", *self.argv],
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         env=self.env, cwd=self.cwd, start_new_session=True)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def check(self):
        if self.proc is not None and self.proc.poll() is not None:
            raise StartError(self.name, f"exited with status {self.proc.returncode}", self.log)

    def stop(self, grace=3.0):
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        # Anything else left in the group (a server's own children).
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Deadline:
    """The time left to start the servers; waits end early when a stop is asked for."""

    def __init__(self, seconds, stopping):
        self.end = time.monotonic() + seconds
        self.stopping = stopping

    def wait_for(self, what, probe, children=(), interval=0.2, server="servers", log=None):
        while True:
            if self.stopping.is_set():
                raise Stopped()
            for child in children:
                child.check()
            result = probe()
            if result:
                return result
            if time.monotonic() > self.end:
                raise StartError(server, f"timed out waiting for {what}", log)
            time.sleep(interval)


def run_tool(argv, log, timeout=120, server="s3"):
    """A short command, its output appended to log; its stdout when it succeeds."""
    with open(log, "ab") as out:
        out.write(f"$ {' '.join(argv)}\n".encode())
        out.flush()
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=out,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise StartError(server, f"{argv[0]} took more than {timeout} s", log) from None
        out.write(done.stdout)
    if done.returncode != 0:
        raise StartError(server, f"{' '.join(argv[:3])} failed with status {done.returncode}", log)
    return done.stdout.decode()


def http_answers(url, context=None):
    """True once the server at url gives any HTTP answer (an error status included)."""
    try:
        with urllib.request.urlopen(url, timeout=5, context=context):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, urllib.error.URLError):
        return False


class CephS3:
    """radosgw over a private one-node Ceph cluster: a monitor and an OSD on memstore; no manager is needed."""

    name = "s3"

    def __init__(self, base, logs):
        self.dir = base / "ceph"
        self.logs = logs / "ceph"
        self.children = []

    def conf(self, fsid, mon_port, rgw_port):
        d, logs = self.dir, self.logs
        return f"""[global]
fsid = {fsid}
mon host = v2:127.0.0.1:{mon_port}
mon initial members = a
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind retry count = 2
ms bind retry delay = 1
# Nothing but this test's processes reach the cluster, over loopback.
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
# Unix sockets have a short path limit, and nothing here uses the daemons' admin sockets.
admin socket =
run dir = {d}/run
pid file =
log file = {logs}/$name.log
log to stderr = false
err to stderr = true
keyring = {d}/keyring
mon data = {d}/mon/$id
osd data = {d}/osd/$id
osd objectstore = memstore
memstore device bytes = 8589934592
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
# The host's free disk space is no concern of an OSD kept in memory.
mon data avail warn = 1
mon data avail crit = 0
mon osd nearfull ratio = .97
mon osd backfillfull ratio = .98
mon osd full ratio = .99
osd failsafe full ratio = .999
osd max object name len = 460
osd max object namespace len = 64

[client.rgw.test]
# Without tcp_nodelay, an answer written as a head and then a body waits for the client's delayed ACK on a reused
# connection, which makes every request on a keep-alive connection slow.
rgw frontends = beast endpoint=127.0.0.1:{rgw_port} tcp_nodelay=1
rgw data = {d}/rgw
rgw enable usage log = false
# radosgw asks for a secure connection to the monitor by default, which authentication "none" cannot give.
ms mon client mode = crc secure
debug rgw = 1
"""

    def start(self, deadline):
        # A start tried again begins with empty logs, so that nothing an earlier try wrote is read as news.
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.logs, ignore_errors=True)
        for sub in ("run", "mon/a", "osd", "rgw"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        setup_log = self.logs / "setup.log"
        fsid = str(uuid.uuid4())
        mon_port, self.port = free_port(), free_port()
        conf = self.dir / "ceph.conf"
        conf.write_text(self.conf(fsid, mon_port, self.port))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}
        c = ["-c", str(conf)]
        ceph = ["ceph", *c, "--connect-timeout", "60"]

        monmap = self.dir / "monmap"
        run_tool(["monmaptool", "--create", "--add", "a", f"v2:127.0.0.1:{mon_port}", "--fsid", fsid, str(monmap)],
                 setup_log)
        run_tool(["ceph-mon", *c, "--mkfs", "-i", "a", "--monmap", str(monmap)], setup_log)
        mon = self._spawn("ceph-mon", ["ceph-mon", *c, "-i", "a", "-f"], env)

        def mon_answers():
            # A monitor whose port was taken retries the bind rather than exit: its log says so at once.
            if "Address already in use" in log_tail(mon.log):
                raise StartError("s3 (ceph-mon)", f"port {mon_port} is taken", mon.log)
            return subprocess.run(["ceph", *c, "--connect-timeout", "5", "mon", "stat"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env).returncode == 0

        deadline.wait_for("the monitor to answer", mon_answers, [mon], server="s3 (ceph-mon)", log=mon.log)

        osd_uuid = str(uuid.uuid4())
        osd_id = run_tool([*ceph, "osd", "new", osd_uuid], setup_log).strip()
        (self.dir / "osd" / osd_id).mkdir(parents=True, exist_ok=True)
        run_tool(["ceph-osd", *c, "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid], setup_log)
        osd = self._spawn("ceph-osd", ["ceph-osd", *c, "-i", osd_id, "-f"], env)

        def osd_up():
            out = run_tool([*ceph, "osd", "stat", "-f", "json"], setup_log)
            return json.loads(out).get("num_up_osds", 0) >= 1

        deadline.wait_for("the OSD to be up", osd_up, [mon, osd], interval=0.3, server="s3 (ceph-osd)",
                          log=self.logs / "osd.0.log")
        rgw = self._spawn("radosgw", ["radosgw", *c, "-n", "client.rgw.test", "-f"], env)
        endpoint = f"http://127.0.0.1:{self.port}"
        deadline.wait_for("radosgw to answer", lambda: http_answers(endpoint + "/"), [mon, osd, rgw],
                          server="s3 (radosgw)", log=self.logs / "client.rgw.test.log")

        secret = uuid.uuid4().hex + uuid.uuid4().hex[:8]
        run_tool(["radosgw-admin", *c, "user", "create", "--uid", "feedline-test", "--display-name", "feedline test",
                  "--access-key", ACCESS_KEY, "--secret-key", secret], setup_log)
        info = {"endpoint": endpoint, "region": REGION, "access_key": ACCESS_KEY, "secret_key": secret,
                "server": "radosgw", "verifies_signatures": True}
        deadline.wait_for("a signed request to succeed", lambda: self._signed_request_works(info, setup_log),
                          [mon, osd, rgw], interval=0.5, server="s3 (radosgw)", log=setup_log)
        return info

    def _spawn(self, name, argv, env):
        child = Child(f"s3 ({name})", argv, self.logs / f"{name}.out", env=env, cwd=self.dir).start()
        self.children.append(child)
        return child

    @staticmethod
    def _signed_request_works(info, log):
        if str(HERE) not in sys.path:
            sys.path.insert(0, str(HERE))
        import s3tool  # noqa: E402 (botocore is slow to import: only when an S3 server is asked for)

        try:
            s3tool.client(info).list_buckets()
            return True
        except Exception as e:  # noqa: BLE001 (botocore's errors have no common base short of Exception)
            with open(log, "a") as f:
                f.write(f"signed ListBuckets: {e}\n")
            return False

    def stop(self):
        # Reverse order: the gateway first, so it does not hang on a vanished cluster; the OSD is killed outright
        # since memstore would write its whole contents out on a clean stop.
        for child in reversed(self.children):
            child.stop(grace=0.0 if "ceph-osd" in child.name else 3.0)
        self.children.clear()


class Web:
    """nginx over HTTP and HTTPS on loopback, one process with no master (nothing to leave behind)."""

    name = "http"

    def __init__(self, base, logs):
        self.dir = base / "http"
        self.tls = base / "tls"
        self.logs = logs
        self.child = None

    def start(self, deadline):
        for d in (self.dir, self.tls):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
        www = self.dir / "www"
        www.mkdir()
        (self.dir / "tmp").mkdir()
        self.logs.mkdir(parents=True, exist_ok=True)
        ca = make_certificates(self.tls, self.logs / "openssl.log")
        port, tls_port = free_port(), free_port()
        conf = self.dir / "nginx.conf"
        conf.write_text(self.conf(port, tls_port, www))
        log = self.logs / "nginx.out"
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.child = Child("http (nginx)", [nginx, "-p", str(self.dir), "-c", str(conf), "-e",
                                            str(self.logs / "nginx-error.log")], log, cwd=self.dir).start()
        url, https_url = f"http://127.0.0.1:{port}", f"https://localhost:{tls_port}"
        context = ssl.create_default_context(cafile=str(ca))
        deadline.wait_for("nginx to answer", lambda: http_answers(url + "/") and http_answers(https_url + "/",
                                                                                                    context),
                          [self.child], server="http (nginx)", log=self.logs / "nginx-error.log")
        return {"url": url, "https_url": https_url, "ca_file": str(ca), "root": str(www)}

    def conf(self, port, tls_port, www):
        d, logs = self.dir, self.logs
        temp = "\n".join(f'  {kind}_temp_path "{d}/tmp/{kind}";' for kind in
                         ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return f"""daemon off;
master_process off;
pid "{d}/nginx.pid";
error_log "{logs}/nginx-error.log" info;
events {{ worker_connections 1024; }}
http {{
  access_log "{logs}/nginx-access.log";
{temp}
  types {{ text/plain txt; text/csv csv; application/json json; text/html html; }}
  default_type application/octet-stream;
  sendfile on;
  keepalive_requests 100000;
  server {{
    listen 127.0.0.1:{port};
    root "{www}";
  }}
  server {{
    listen 127.0.0.1:{tls_port} ssl;
    server_name localhost;
    ssl_certificate "{self.tls}/server.pem";
    ssl_certificate_key "{self.tls}/server.key";
    root "{www}";
  }}
}}
"""

    def stop(self):
        if self.child:
            self.child.stop()
            self.child = None


def make_certificates(tls, log):
    """A test CA and a certificate for localhost and 127.0.0.1 signed by it; the CA's path."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run_tool(["openssl", "req", "-x509", *key, "-keyout", str(tls / "ca.key"), "-out", str(tls / "ca.pem"),
              "-days", "30", "-subj", "/CN=feedline test CA",
              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
             log, server="http (openssl)")
    run_tool(["openssl", "req", *key, "-keyout", str(tls / "server.key"), "-out", str(tls / "server.csr"),
              "-subj", "/CN=localhost"], log, server="http (openssl)")
    ext = tls / "server.ext"
    ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run_tool(["openssl", "x509", "-req", "-in", str(tls / "server.csr"), "-CA", str(tls / "ca.pem"),
              "-CAkey", str(tls / "ca.key"), "-CAcreateserial", "-days", "30", "-extfile", str(ext),
              "-out", str(tls / "server.pem")], log, server="http (openssl)")
    return tls / "ca.pem"


class Proxy:
    """fault_proxy.py in front of one of the other servers."""

    def __init__(self, target, upstream, base, logs):
        self.name = f"proxy {target}"
        self.target, self.upstream = target, upstream
        self.port_file = base / f"proxy-{target}.port"
        self.log = logs / f"proxy-{target}.log"
        self.child = None

    def start(self, deadline):
        self.port_file.unlink(missing_ok=True)
        self.child = Child(self.name, [PYTHON, str(HERE / "fault_proxy.py"), "--upstream", self.upstream,
                                       "--port-file", str(self.port_file)], self.log).start()
        port = deadline.wait_for("its port", lambda: self.port_file.exists() and self.port_file.read_text().strip(),
                                 [self.child], server=self.name, log=self.log, interval=0.05)
        url = f"http://127.0.0.1:{port}"
        deadline.wait_for("its control API", lambda: http_answers(url + "/__proxy/faults"), [self.child],
                          server=self.name, log=self.log, interval=0.05)
        return {"url": url, "control": url + "/__proxy"}

    def stop(self):
        if self.child:
            self.child.stop()
            self.child = None


class Supervisor:
    """Starts the servers asked for, publishes servers.json, and stops them all on request."""

    def __init__(self, args, stopping):
        self.args = args
        self.dir = Path(args.dir).resolve()
        self.logs = self.dir / LOGS
        self.stopping = stopping
        self.servers = []

    def start(self):
        t0 = time.monotonic()
        deadline = Deadline(self.args.timeout, self.stopping)
        info = {}
        started = {}
        wanted = []
        if self.args.http:
            wanted.append(Web(self.dir, self.logs))
        if self.args.s3:
            wanted.append(CephS3(self.dir, self.logs))
        for server in wanted:
            info[server.name] = self._start(server, deadline)
            started[server.name] = server
        proxy_info = {}
        for target in dict.fromkeys(self.args.proxy or []):
            if target not in info:
                raise StartError(f"proxy {target}", f"needs --{target}: there is no {target} server to stand before")
            upstream = info[target]["endpoint"] if target == "s3" else info[target]["url"]
            proxy_info[target] = self._start(Proxy(target, upstream, self.dir, self.logs), deadline)
        if proxy_info:
            info["proxy"] = proxy_info
        tmp = self.dir / (STATE + ".tmp")
        tmp.write_text(json.dumps(info, indent=2) + "\n")
        os.replace(tmp, self.dir / STATE)
        names = [("s3 (" + info["s3"]["server"] + ")") if n == "s3" else n for n in info if n != "proxy"]
        names += [f"proxy {t}" for t in proxy_info]
        return f"servers: {', '.join(names)} ready in {time.monotonic() - t0:.1f} s: {self.dir / STATE}"

    def _start(self, server, deadline):
        for attempt in range(3):
            self.servers.append(server)
            try:
                return server.start(deadline)
            except StartError as e:
                server.stop()
                self.servers.remove(server)
                if not e.port_in_use() or attempt == 2:
                    raise

    def watch(self):
        """Until a stop is asked for or --max-seconds have passed; notes a server that dies on its own."""
        end = time.monotonic() + self.args.max_seconds
        reported = set()
        while not self.stopping.wait(1.0):
            if time.monotonic() > end:
                print(f"servers: stopping after --max-seconds {self.args.max_seconds}", flush=True)
                return
            for server in self.servers:
                for child in getattr(server, "children", None) or [getattr(server, "child", None)]:
                    if child and not child.alive() and child.name not in reported:
                        reported.add(child.name)
                        print(f"servers: {child.name} exited with status {child.proc.returncode}; its log: "
                              f"{child.log}", flush=True)

    def stop(self):
        for server in reversed(self.servers):
            server.stop()
        self.servers.clear()
        clear_state(self.dir)


def clear_state(d):
    """What the servers keep under d, their logs aside; nothing else that d holds."""
    if not d.is_dir():
        return
    for name in ("ceph", "http", "tls"):
        shutil.rmtree(d / name, ignore_errors=True)
    for path in [d / STATE, d / (STATE + ".tmp"), d / PID_FILE, *d.glob("proxy-*.port"), *d.glob("proxy-*.port.tmp")]:
        path.unlink(missing_ok=True)


def install_stop_triggers(stopping, watch_stdin):
    def on_signal(signum, frame):
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    if watch_stdin:
        try:
            mode = os.fstat(0).st_mode
        except OSError:
            return
        import stat

        # A pipe's end means whoever started us is gone; /dev/null would end at once, so it is not watched.
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0):
            def read_until_eof():
                while os.read(0, 4096):
                    pass
                stopping.set()

            threading.Thread(target=read_until_eof, daemon=True).start()


def up(args):
    d = Path(args.dir).resolve()
    stop_daemon(d, quiet=True)
    d.mkdir(parents=True, exist_ok=True)
    clear_state(d)
    shutil.rmtree(d / LOGS, ignore_errors=True)
    (d / LOGS).mkdir()
    if not (args.s3 or args.http):
        print("servers.py up: nothing to start: give --s3 and/or --http", file=sys.stderr)
        return 2
    if args.detach:
        return detach(args, d)
    stopping = threading.Event()
    install_stop_triggers(stopping, watch_stdin=True)
    supervisor = Supervisor(args, stopping)
    try:
        print(supervisor.start(), flush=True)
        supervisor.watch()
        return 0
    except Stopped:
        return 0
    except StartError as e:
        print(f"servers.py up: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        supervisor.stop()


def detach(args, d):
    """Runs the servers in a daemon; returns once they answer, with the daemon's verdict."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        chunks = []
        while True:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        message = b"".join(chunks).decode("utf-8", "replace")
        if message.startswith("ready "):
            print(message[len("ready "):].rstrip(), flush=True)
            return 0
        text = message[len("failed "):] if message.startswith("failed ") else (
            "the daemon ended without a word; its log:\n" + log_tail(d / LOGS / "servers.log"))
        print(f"servers.py up: {text.rstrip()}", file=sys.stderr, flush=True)
        return 1

    os.close(read_end)
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(d / LOGS / "servers.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    stopping = threading.Event()
    install_stop_triggers(stopping, watch_stdin=False)
    supervisor = Supervisor(args, stopping)
    status = 0
    try:
        (d / PID_FILE).write_text(f"{os.getpid()}\n")
        line = supervisor.start()
        print(line, flush=True)
        os.write(write_end, f"ready {line}\n".encode())
        os.close(write_end)
        write_end = None
        supervisor.watch()
    except Stopped:
        pass
    except BaseException as e:  # noqa: BLE001 (whatever it is, the waiting parent must hear of it)
        status = 1
        print(f"servers.py up: {e}", flush=True)
        if write_end is not None:
            os.write(write_end, f"failed {e}\n".encode())
    finally:
        if write_end is not None:
            os.close(write_end)
        supervisor.stop()
        (d / PID_FILE).unlink(missing_ok=True)
        print("servers: stopped", flush=True)
    os._exit(status)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie has not been reaped but is gone for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop_daemon(d, quiet=False, timeout=60):
    pid_file = d / PID_FILE
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        if not quiet:
            print(f"servers.py down: no servers running from {d}")
        return 0
    if pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        if pid_alive(pid):
            # Its servers die with it (their parent-death signal).
            print(f"servers.py down: the daemon {pid} did not stop in {timeout} s; killing it", file=sys.stderr)
            os.killpg(pid, signal.SIGKILL)
            while pid_alive(pid):
                time.sleep(0.1)
    clear_state(d)
    if not quiet:
        print(f"servers: stopped the servers of {d}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_up = sub.add_parser("up", help="start servers")
    p_up.add_argument("--dir", required=True, help="folder for the servers' state, logs and servers.json")
    p_up.add_argument("--s3", action="store_true", help="an S3 gateway (radosgw)")
    p_up.add_argument("--http", action="store_true", help="nginx over HTTP and HTTPS")
    p_up.add_argument("--proxy", action="append", choices=("s3", "http"), help="a fault proxy before that server")
    p_up.add_argument("--detach", action="store_true", help="return once ready; stop with `down`")
    p_up.add_argument("--max-seconds", type=float, default=7200, help="stop by itself after this long")
    p_up.add_argument("--timeout", type=float, default=240, help="give up starting after this long")
    p_down = sub.add_parser("down", help="stop the servers that `up --detach` started")
    p_down.add_argument("--dir", required=True)
    args = parser.parse_args(argv)
    if args.command == "up":
        return up(args)
    return stop_daemon(Path(args.dir).resolve())


if __name__ == "__main__":
    sys.exit(main())
