#!/usr/bin/env python3
"""Courier's benchmarks, in one command: python3 Benchmarks/run.py

Builds the bench executables in release, generates the served files, starts nginx on loopback,
runs every client on every workload (client order rotated each round, reversed every other
round; every run under /usr/bin/time -v for peak RSS and CPU time), stops nginx and writes
BENCHMARKS.md at the repository root. Raw results (one JSON line per run) go to
Benchmarks/results/raw-<timestamp>.jsonl.

Knobs (environment):
  ROUNDS=3            rounds per workload (medians are over rounds)
  WORKLOADS=A,B,C,D,F,G   letters or names: A=seq B=conc C=dlmem,dldisk D=json F=dedupe G=resume
                      (E is computed from the transport-direct rows of A and B)
  ONLY=name,name      keep only these clients (names as in the tables' "id" column)
  BUILD=0             skip `swift build -c release`
  PORT=18080          nginx port on 127.0.0.1
  WORK=/tmp/courier-bench   scratch directory: nginx root, served files, downloads
  OUT=BENCHMARKS.md   report path (relative to the repository root)
  NO_REPORT=1         do not (re)write the report; results still go to results/
  SETTLE=1            seconds to sleep (after `sync`) before each run
  QUICK=1             a tenth of the requests in A, B and D (smoke test; the report says so)
"""
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROUNDS = int(os.environ.get("ROUNDS", "3"))
PORT = int(os.environ.get("PORT", "18080"))
WORK = os.environ.get("WORK", "/tmp/courier-bench")
OUT = os.path.join(ROOT, os.environ.get("OUT", "BENCHMARKS.md"))
SETTLE = float(os.environ.get("SETTLE", "1"))
BIN = os.path.join(HERE, ".build", "release")
WWW = os.path.join(WORK, "www")
DL = os.path.join(WORK, "dl")
LOG = os.path.join(WORK, "logs", "bench.log")
BASE = f"http://127.0.0.1:{PORT}"

GIB = 1 << 30
MIB = 1 << 20
RESUME_BYTES = 64 * MIB
RESUME_RATE = "32m"  # nginx limit_rate on /throttled/: 32 MiB/s, so the 64 MiB file takes ~2 s

LETTERS = {"A": ["seq"], "B": ["conc"], "C": ["dlmem", "dldisk"], "D": ["json"], "E": [],
           "F": ["dedupe"], "G": ["resume"]}
ALL = ["seq", "conc", "dlmem", "dldisk", "json", "dedupe", "resume"]

PARAMS = {
    "seq": dict(path="/small.json", n=5000, c=1),
    "conc": dict(path="/small.json", n=50000, c=32),
    "dlmem": dict(path="/big.bin", n=1, c=1),
    "dldisk": dict(path="/big.bin", n=1, c=1),
    "json": dict(path="/medium.json", n=2000, c=8),
    "dedupe": dict(path="/logged/onemib.bin", n=100, c=32),
    "resume": dict(path="/throttled/resume.bin", n=1, c=1),
}

QUICK = os.environ.get("QUICK") == "1"
if QUICK:
    for _wl in ("seq", "conc", "json"):
        PARAMS[_wl]["n"] //= 10

def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def say(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- set-up

def ensure_tools():
    missing = [pkg for tool, pkg in (("/usr/bin/time", "time"), ("nginx", "nginx"), ("curl", "curl"), ("wrk", "wrk"))
               if not (os.path.exists(tool) if tool.startswith("/") else shutil.which(tool))]
    if missing and os.geteuid() == 0 and shutil.which("apt-get"):
        say(f"installing {' '.join(missing)} with apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, env=env, check=False)
    for tool in ("/usr/bin/time", "nginx", "curl"):
        if not (os.path.exists(tool) if tool.startswith("/") else shutil.which(tool)):
            sys.exit(f"{tool} is needed (apt-get install time nginx curl)")


def build():
    if os.environ.get("BUILD", "1") == "0":
        return 0.0
    say("building the bench executables in release (the first AsyncHTTPClient build takes several minutes)")
    t0 = time.monotonic()
    p = subprocess.run(["swift", "build", "-c", "release", "--package-path", HERE])
    if p.returncode != 0:
        sys.exit("release build failed")
    return time.monotonic() - t0


def make_files():
    os.makedirs(WWW, exist_ok=True)
    compact = lambda o: json.dumps(o, separators=(",", ":"))
    small = {"id": 1, "name": "bench", "ok": True, "v": [1, 2, 3], "s": ""}
    small["s"] = "x" * (100 - len(compact(small)))
    assert len(compact(small)) == 100
    with open(os.path.join(WWW, "small.json"), "w") as f:
        f.write(compact(small))
    items, i = [], 0
    while True:
        items.append({"id": i, "name": "item-%05d" % i, "price": i * 1.25, "tags": ["a", "b"], "active": i % 2 == 0})
        if len(compact({"items": items, "pad": ""})) > 65536:
            items.pop()
            break
        i += 1
    medium = compact({"items": items, "pad": "p" * (65536 - len(compact({"items": items, "pad": ""})))})
    assert len(medium) == 65536 and len(items) == 852
    with open(os.path.join(WWW, "medium.json"), "w") as f:
        f.write(medium)
    for name, size in (("big.bin", GIB), ("onemib.bin", MIB), ("resume.bin", RESUME_BYTES)):
        path = os.path.join(WWW, name)
        if not os.path.exists(path) or os.path.getsize(path) != size:
            say(f"writing {size >> 20} MiB of random bytes to {path}")
            with open(path, "wb") as f:
                for _ in range(size // MIB):
                    f.write(os.urandom(MIB))
    # Read everything once so that it is in the page cache.
    for name in ("big.bin", "resume.bin", "onemib.bin"):
        with open(os.path.join(WWW, name), "rb") as f:
            while f.read(8 * MIB):
                pass


NGINX_CONF = """worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {work}/tmp/client_body;
    proxy_temp_path {work}/tmp/proxy;
    fastcgi_temp_path {work}/tmp/fastcgi;
    uwsgi_temp_path {work}/tmp/uwsgi;
    scgi_temp_path {work}/tmp/scgi;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    gzip off;
    types {{ application/json json; application/octet-stream bin; }}
    default_type application/octet-stream;
    log_format bench '$msec $connection $status $bytes_sent $body_bytes_sent "$http_range" $request_uri';
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        root {work}/www;
        location / {{ }}
        # Workload F: every request logged with the bytes sent.
        location /logged/ {{
            alias {work}/www/;
            access_log {work}/logs/bench.log bench;
        }}
        # Workload G: throttled so that the interruption at 50% is deterministic; logged.
        location /throttled/ {{
            alias {work}/www/;
            limit_rate {rate};
            access_log {work}/logs/bench.log bench;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self):
        for d in ("logs", "tmp", "dl"):
            os.makedirs(os.path.join(WORK, d), exist_ok=True)
        self.conf = os.path.join(WORK, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(NGINX_CONF.format(work=WORK, port=PORT, rate=RESUME_RATE))
        self.master = None

    def start(self):
        self.stop_stale()
        p = sh(["nginx", "-c", self.conf])
        if p.returncode != 0:
            sys.exit("nginx failed to start: " + p.stderr)
        for _ in range(100):
            if os.path.exists(os.path.join(WORK, "nginx.pid")):
                break
            time.sleep(0.05)
        self.master = int(open(os.path.join(WORK, "nginx.pid")).read().strip())
        self.worker = self.find_worker()
        code = sh(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", BASE + "/small.json"]).stdout
        if code != "200":
            sys.exit(f"nginx does not answer on {BASE} (got {code!r})")

    def find_worker(self):
        for _ in range(100):
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        stat = open(f"/proc/{pid}/stat").read()
                    except OSError:
                        continue
                    ppid = int(stat.rsplit(")", 1)[1].split()[1])
                    if ppid == self.master:
                        return int(pid)
            time.sleep(0.05)
        sys.exit("no nginx worker process found")

    def stop_stale(self):
        pidfile = os.path.join(WORK, "nginx.pid")
        if os.path.exists(pidfile):
            try:
                pid = int(open(pidfile).read().strip())
                if "nginx" in open(f"/proc/{pid}/cmdline").read():
                    os.kill(pid, signal.SIGQUIT)
                    time.sleep(0.5)
            except (OSError, ValueError):
                pass

    def stop(self):
        if self.master:
            try:
                os.kill(self.worker, signal.SIGCONT)
                os.kill(self.master, signal.SIGQUIT)
            except OSError:
                pass
            self.master = None

    def version(self):
        return sh(["nginx", "-v"]).stderr.strip().replace("nginx version: nginx/", "")


def log_offset():
    return os.path.getsize(LOG) if os.path.exists(LOG) else 0


def log_lines_since(offset):
    time.sleep(0.2)  # nginx writes a request's line when it ends; give a closing connection a moment
    if not os.path.exists(LOG):
        return []
    with open(LOG) as f:
        f.seek(offset)
        out = []
        for line in f:
            m = re.match(r'(\S+) (\d+) (\d+) (\d+) (\d+) "([^"]*)" (\S+)', line)
            if m:
                out.append(dict(msec=float(m.group(1)), conn=int(m.group(2)), status=int(m.group(3)),
                                sent=int(m.group(4)), body=int(m.group(5)), range=m.group(6), uri=m.group(7)))
        return sorted(out, key=lambda x: x["msec"])


# ---------------------------------------------------------------- clients

def swift_cmd(binary, client, wl, extra=()):
    p = PARAMS[wl]
    cmd = [os.path.join(BIN, binary), wl, "--client", client, "--url", BASE + p["path"],
           "--n", str(p["n"]), "--c", str(p["c"]), "--out", os.path.join(DL, "dl.bin"),
           "--store", os.path.join(WORK, "store")]
    if wl == "dedupe":
        cmd += ["--gate-pid", "{gate}"]
    if wl == "resume":
        cmd += ["--expect-bytes", str(RESUME_BYTES)]
    return cmd + list(extra)


def parse_swift(out, wall):
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no result line: " + out[-400:])


UNITS = {"us": 1, "ms": 1e3, "s": 1e6}
SIZES = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}


def parse_wrk(out, wall):
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+), ([\d.]+)(\w+) read", out)
    secs = float(m.group(2)) * {"s": 1, "m": 60, "ms": 1e-3}[m.group(3)]
    r = dict(n=int(m.group(1)), seconds=secs, rps=float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)))
    for pct, key in (("50%", "p50_us"), ("99%", "p99_us")):
        mm = re.search(r"\s" + pct + r"\s+([\d.]+)(us|ms|s)", out)
        if mm:
            r[key] = float(mm.group(1)) * UNITS[mm.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    r["errors"] = (int(non2xx.group(1)) if non2xx else 0) + (sum(map(int, sock.groups())) if sock else 0)
    return r


def curl_cmd(wl):
    p = PARAMS[wl]
    url = BASE + p["path"]
    base = ["curl", "-s", "--no-progress-meter"]
    if wl == "seq":  # one process, one connection; time_total per transfer for the percentiles
        return base + ["-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download}\n", f"{url}?i=[1-{p['n']}]"]
    if wl in ("conc", "json", "dedupe"):
        return base + ["-Z", "--parallel-max", str(p["c"]), "--parallel-immediate", "-o", "/dev/null",
                       "-w", "%{http_code} %{time_total} %{size_download}\n", f"{url}?i=[1-{p['n']}]"]
    if wl in ("dlmem", "dldisk"):
        out = "/dev/null" if wl == "dlmem" else os.path.join(DL, "dl.bin")
        return base + ["-o", out, "-w", "%{http_code} %{time_total} %{size_download}\n", url]
    raise KeyError(wl)


def parse_curl(wl):
    def parse(out, wall):
        rows = [l.split() for l in out.splitlines() if l.strip()]
        errors = sum(1 for r in rows if r[0] != "200")
        r = dict(n=len(rows), errors=errors, seconds=wall, rps=len(rows) / wall,
                 bytes=sum(int(float(x[2])) for x in rows))
        if wl == "seq":
            lat = sorted(float(x[1]) * 1e6 for x in rows)
            r.update(p50_us=lat[max(0, int(0.5 * len(lat)) - 1)], p99_us=lat[max(0, int(0.99 * len(lat)) - 1)])
        if wl in ("dlmem", "dldisk"):
            # curl's own transfer time (excludes process start), as for the Swift clients
            r.update(seconds=float(rows[0][1]))
            r["mbps"] = r["bytes"] / 1e6 / r["seconds"]
            if wl == "dldisk":
                r["bytes"] = os.path.getsize(os.path.join(DL, "dl.bin"))
        if wl == "dedupe":
            r["mbps"] = r["bytes"] / 1e6 / wall
        return r
    return parse


def clients_for(wl):
    cs = []
    add = lambda cid, cmd, parser: cs.append((cid, cmd, parser))
    if wl in ("seq", "conc") and shutil.which("wrk"):
        p = PARAMS[wl]
        add("wrk", ["wrk", "-t1", f"-c{p['c']}", "-d5s", "--latency", BASE + p["path"]], parse_wrk)
    if wl == "resume":
        add("curl", "curl-resume", None)
    else:
        add("curl", curl_cmd(wl), parse_curl(wl))
    add("urlsession", swift_cmd("bench-urlsession", "urlsession", wl), parse_swift)
    add("ahc", swift_cmd("bench-ahc", "ahc", wl), parse_swift)
    for transport in ("curl", "urlsession"):
        add(f"courier-{transport}", swift_cmd("bench-courier", f"courier-{transport}", wl), parse_swift)
        if wl in ("seq", "conc"):
            add(f"transport-{transport}", swift_cmd("bench-courier", f"transport-{transport}", wl), parse_swift)
        if wl == "dedupe":
            add(f"courier-{transport}+dedupe", swift_cmd("bench-courier", f"courier-{transport}+dedupe", wl), parse_swift)
    only = os.environ.get("ONLY")
    if only:
        keep = set(only.split(","))
        cs = [c for c in cs if c[0] in keep]
    return cs


TIME_FIELDS = {
    "peak_rss_kb": r"Maximum resident set size \(kbytes\): (\d+)",
    "cpu_user": r"User time \(seconds\): ([\d.]+)",
    "cpu_sys": r"System time \(seconds\): ([\d.]+)",
    "vol_cs": r"Voluntary context switches: (\d+)",
}


def timed(cmd, timeout=900):
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    rusage = {}
    for key, rx in TIME_FIELDS.items():
        m = re.search(rx, p.stderr)
        if m:
            rusage[key] = float(m.group(1))
    return p, wall, rusage


def run_curl_resume(nginx):
    """curl's own resume: kill the process once the file passes 50%, then `curl -C -`."""
    out = os.path.join(DL, "dl.bin")
    url = BASE + PARAMS["resume"]["path"]
    if os.path.exists(out):
        os.unlink(out)
    first = subprocess.Popen(["curl", "-s", "-o", out, url])
    deadline = time.monotonic() + 120
    while (not os.path.exists(out) or os.path.getsize(out) < RESUME_BYTES // 2) and time.monotonic() < deadline:
        time.sleep(0.001)
    first.kill()  # SIGKILL: SIGINT may be ignored when run.py itself runs in the background
    first.wait()
    kept = os.path.getsize(out)
    time.sleep(0.3)
    p, wall, rusage = timed(["curl", "-s", "-C", "-", "-o", out, "-w", "%{http_code} %{time_total}\n", url])
    code, secs = p.stdout.split()
    r = dict(n=1, seconds=float(secs), bytes=os.path.getsize(out), errors=0 if code == "206" else 1,
             kept_bytes=kept, received_bytes=kept, resume_data="the partial file (-C -)")
    r.update(rusage)
    return r


def run_one(nginx, cid, cmd, parser, wl):
    offset = log_offset()
    if cmd == "curl-resume":
        r = run_curl_resume(nginx)
    else:
        cmd = [str(nginx.worker) if c == "{gate}" else c for c in cmd]
        p, wall, rusage = timed(cmd)
        if p.returncode != 0:
            return dict(failed=True, rc=p.returncode, stderr=p.stderr[-1500:], wall=wall)
        r = parser(p.stdout, wall)
        r.update(rusage, wall=wall)
        if p.stderr.strip() and "Command being timed" not in p.stderr.splitlines()[0]:
            r["stderr"] = p.stderr.split("\tCommand being timed")[0][-600:]
    if wl in ("dedupe", "resume"):
        lines = log_lines_since(offset)
        r["server_requests"] = len(lines)
        r["server_bytes_sent"] = sum(l["sent"] for l in lines)
        r["server_body_bytes"] = sum(l["body"] for l in lines)
        if wl == "resume":
            if len(lines) >= 2:
                first, second = lines[0], lines[-1]
                r.update(first_body_bytes=first["body"], second_body_bytes=second["body"],
                         second_status=second["status"], second_range=second["range"])
            ok = sh(["cmp", "-s", os.path.join(DL, "dl.bin"), os.path.join(WWW, "resume.bin")]).returncode == 0
            r["identical"] = ok
            if not ok:
                r["errors"] = r.get("errors", 0) + 1
    if wl in ("dldisk", "resume"):
        path = os.path.join(DL, "dl.bin")
        if os.path.exists(path):
            os.unlink(path)
    expected = {"dlmem": GIB, "dldisk": GIB}.get(wl)
    if expected and r.get("bytes") != expected:
        r["errors"] = r.get("errors", 0) + 1
    return r


# ---------------------------------------------------------------- orchestration

def machine():
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
    curl_v = sh(["curl", "--version"]).stdout.splitlines()[0]
    libcurl = re.search(r"libcurl/(\S+)", curl_v).group(1) if "libcurl/" in curl_v else "?"
    deb = sh("dpkg-query -W -f='${Version}' libcurl4 2>/dev/null").stdout.strip()
    swift_v = sh(["swift", "--version"]).stdout.strip().splitlines()
    ahc = "1.37.x"
    for resolved in (os.path.join(HERE, "Package.resolved"),):
        try:
            pins = json.load(open(resolved))["pins"]
            versions = {p["identity"]: p["state"].get("version") for p in pins}
            ahc = versions.get("async-http-client", ahc)
            nio = versions.get("swift-nio")
        except (OSError, KeyError, ValueError):
            nio = None
    head = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", "Sources"]).stdout.strip()
    return dict(library=head + (" + uncommitted changes in Sources/" if dirty else ""), cpu=cpu, cores=os.cpu_count(), mem_gib=round(int(mem) / 1024 / 1024, 1),
                kernel=platform.release(), os=sh("grep PRETTY_NAME /etc/os-release | cut -d= -f2").stdout.strip().strip('"'),
                swift=swift_v[0] if swift_v else "?", libcurl=libcurl + (f" (Debian {deb})" if deb else ""),
                curl=curl_v.split(" (")[0], wrk=(sh(["wrk", "--version"]).stdout + sh(["wrk", "--version"]).stderr).split(" [")[0].strip() if shutil.which("wrk") else "not installed",
                ahc=ahc, nio=nio or "?")


def main():
    started = time.monotonic()
    start_wall = datetime.datetime.now().astimezone()
    wanted = os.environ.get("WORKLOADS", "A,B,C,D,F,G").split(",")
    workloads = []
    for w in wanted:
        for name in LETTERS.get(w.strip().upper(), [w.strip()]):
            if name in ALL and name not in workloads:
                workloads.append(name)
    ensure_tools()
    build_seconds = build()
    make_files()
    os.makedirs(DL, exist_ok=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    raw_path = os.path.join(HERE, "results", start_wall.strftime("raw-%Y%m%d-%H%M%S.jsonl"))
    info = machine()
    info["load_at_start"] = os.getloadavg()
    info["started"] = start_wall.strftime("%Y-%m-%d %H:%M %Z")
    nginx = Nginx()
    info["nginx"] = nginx.version()
    nginx.start()
    results = []
    try:
        with open(raw_path, "w") as raw:
            raw.write(json.dumps(dict(machine=info)) + "\n")
            for wl in workloads:
                cs = clients_for(wl)
                for rnd in range(ROUNDS):
                    k = rnd % len(cs)
                    order = cs[k:] + cs[:k]
                    if rnd % 2 == 1:
                        order = order[::-1]
                    for cid, cmd, parser in order:
                        subprocess.run(["sync"])
                        time.sleep(SETTLE)
                        load = os.getloadavg()[0]
                        try:
                            r = run_one(nginx, cid, cmd, parser, wl)
                        except Exception as e:  # keep going; the report shows the failure
                            r = dict(failed=True, error=repr(e))
                        r.update(client=cid, workload=wl, round=rnd + 1, load1=load,
                                 cmd=cmd if isinstance(cmd, str) else " ".join(cmd))
                        results.append(r)
                        raw.write(json.dumps(r) + "\n")
                        raw.flush()
                        brief = {k2: (round(r[k2], 1) if isinstance(r.get(k2), float) else r.get(k2))
                                 for k2 in ("rps", "mbps", "p50_us", "peak_rss_kb", "errors", "server_requests", "failed")
                                 if k2 in r}
                        say(f"[{wl} r{rnd + 1} load {load:.2f}] {cid}: {brief}")
    finally:
        nginx.stop()
    info["runtime_s"] = time.monotonic() - started
    info["build_s"] = build_seconds
    info["load_at_end"] = os.getloadavg()
    info["rounds"] = ROUNDS
    info["raw"] = os.path.relpath(raw_path, ROOT)
    info["params"] = PARAMS
    info["quick"] = QUICK
    with open(raw_path, "a") as raw:
        raw.write(json.dumps(dict(summary=info)) + "\n")
    if os.environ.get("NO_REPORT") != "1":
        sys.path.insert(0, HERE)
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        import report
        with open(OUT, "w") as f:
            f.write(report.render(info, results, workloads))
        say(f"wrote {os.path.relpath(OUT, ROOT)}")
    say(f"done in {info['runtime_s'] / 60:.1f} min (build {build_seconds:.0f} s); raw results: {info['raw']}")


def serve(action):
    """`run.py serve` starts nginx with the benchmark files and leaves it running (for profiling a client
    by hand); `run.py stop` stops it."""
    nginx = Nginx()
    if action == "stop":
        nginx.stop_stale()
        say("nginx stopped")
        return
    make_files()
    nginx.start()
    say(f"nginx serving {WWW} on {BASE} (master {nginx.master}, worker {nginx.worker}); stop: python3 {sys.argv[0]} stop")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("serve", "stop"):
        serve(sys.argv[1])
    else:
        main()
