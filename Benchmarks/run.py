#!/usr/bin/env python3
"""Courier's benchmarks, in one command: python3 Benchmarks/run.py

Builds the bench executables in release, generates the served files and a private CA with a
certificate for 127.0.0.1 (openssl), starts nginx on loopback (HTTP, HTTPS with HTTP/2, HTTPS with
HTTP/1.1 only), runs every client on every workload (client order rotated each round, reversed every other
round; every run under /usr/bin/time -v for peak RSS and CPU time), stops nginx, counts allocations per
request (allocations.py) and writes BENCHMARKS.md at the repository root, every section of it: the
measured ones from this run, and the ones measured by hand elsewhere (integrations, OpenAPI transports,
earlier allocation counts; HTTP/3 when N cannot run here) copied in from Benchmarks/sections/*.md, where
each says when and how it was measured. Raw results (one JSON line per run) go to
Benchmarks/results/raw-<timestamp>.jsonl.

Knobs (environment):
  ROUNDS=3            rounds per workload (medians are over rounds)
  WORKLOADS=A,B,C,D,F,G,H,I,J,K,L,M,N letters or names: A=seq B=conc C=dlmem,dldisk D=json F=dedupe
                      G=resume H=h1seq,h1conc (HTTPS/1.1) I=h2conc32,h2conc256 (HTTP/2) J=tlscold
                      K=sse (1,000,000 Server-Sent Events from one static text/event-stream file)
                      L=wssmall,wslarge,wspipe,wsslow (WebSocket echo against bench-ws-server)
                      M=httpcache,httpcache1,httpcachewarm,httpcachewarm1 (10 passes over 1,000 10 KiB
                      files, half fresh, half revalidated at every reuse; the warm variant starts from a store
                      an earlier process filled, half of it fresh, half stale; HTTP cache on vs off, 8 and 1
                      in flight)
                      N=h3seq,h3conc32 (HTTP/3 against HTTP/2 and HTTP/1.1, one hypercorn/aioquic server; it
                      needs pycurl's manylinux wheel, hypercorn and aioquic, see H3_LIBCURL: without them the
                      default list skips N and the report says why, and WORKLOADS=N stops with what is missing)
                      (E is computed from the transport-direct rows of A and B)
  ONLY=name,name      keep only these clients (names as in the tables' "id" column)
  BUILD=0             skip `swift build -c release`
  PORT=18080          nginx port on 127.0.0.1 (plain HTTP)
  TLS_PORT=PORT+1     HTTPS port, `ssl http2` (HTTP/2 by ALPN)    } same certificate, from a CA
  TLS_H1_PORT=PORT+2  HTTPS port, `ssl` only (HTTP/1.1)          } made at start-up in WORK/tls
  WORK=/tmp/courier-bench   scratch directory: nginx root, served files, downloads
  OUT=BENCHMARKS.md   report path (relative to the repository root)
  NO_REPORT=1         do not (re)write the report; results still go to results/
  SETTLE=1            seconds to sleep (after `sync`) before each run
  BASELINE_BIN=DIR    also run DIR/bench-courier as client "<mode>@base" beside every Courier client the workloads
                      judge, A to M ("courier-curl@base"; F also "courier-curl+dedupe@base", M "courier-curl+cache@base";
                      DIR: the .build/release of another checkout's Benchmarks package, e.g. the previous main), so a
                      change is compared with the code before it in the same run, rounds interleaved; the report's
                      "Courier against the previous main" table (the @base runs appear nowhere else), and
                      DIR/bench-alloc-courier, when there, in the allocation counts
  FAST_PATHS_AB=1     also run Courier with COURIER_FAST_PATHS=0 as client "courier-curl@nofast" in A, B, H and
                      I: the speed tricks behind that switch, on against off, in the same run
  FAST_PATHS_VARIANTS=batch,callerpass,...  measurement of single tricks: for each name, also run Courier with
                      COURIER_FAST_PATHS=-name (that trick off, the others on) as client "courier-curl@no-name"
                      in A, B, H, I, J and L ("courier-curl+cache@no-name" in M); names: host batch callerpass trust
                      memo bytes disk wsinline loopyield (FastPaths.swift's Trick), and "all" for COURIER_FAST_PATHS=0
                      ("...@nofast", in L and M too)
  QUICK=1             a tenth of the requests in A, B, D, H, I, L and N, 2 passes in M, 500 counted requests in the
                      allocation counts (smoke test; the report says so)
  ALLOCATIONS=1       after the timed workloads, count allocations per request (allocations.py: its own nginx on
                      free ports; Courier, AsyncHTTPClient, and BASELINE_BIN's Courier) for the report; on by default
                      when WORKLOADS is not set (a full run), off otherwise
  WS_PORT=PORT+3      bench-ws-server's port (workload L)
  H3_PORT=PORT+4      workload N's server (.ci/h3-server.py: hypercorn with aioquic, Python): HTTP/3 on this UDP
                      port, HTTP/1.1 and HTTP/2 (TLS, ALPN) on this TCP port, the same CA as nginx's
  H3_LIBCURL=FILE     workload N's libcurl (needs HTTP/3): Courier loads it through COURIER_LIBCURL, and the
                      pycurl driver (bench-pycurl.py) must run on the same file; default: the libcurl in the
                      pycurl.libs/ of the pycurl python3 imports (pip install pycurl==7.49.0: its manylinux
                      wheel carries libcurl 8.23 with nghttp2 and ngtcp2/nghttp3, as .ci/fetch-libcurl.sh)
"""
import datetime
import json
import os
import platform
import re
import resource
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
TLS_PORT = int(os.environ.get("TLS_PORT", str(PORT + 1)))
TLS_H1_PORT = int(os.environ.get("TLS_H1_PORT", str(PORT + 2)))
TLS_DIR = os.path.join(WORK, "tls")
CA = os.path.join(TLS_DIR, "ca.crt")
TLS_LOG = os.path.join(WORK, "logs", "tls.log")
BASES = {"http": BASE, "h2": f"https://127.0.0.1:{TLS_PORT}", "h1": f"https://127.0.0.1:{TLS_H1_PORT}"}
S_TIME_SECONDS = 5  # openssl s_time -time: the handshake reference of J

GIB = 1 << 30
MIB = 1 << 20
RESUME_BYTES = 64 * MIB
RESUME_RATE = "32m"  # nginx limit_rate on /throttled/: 32 MiB/s, so the 64 MiB file takes ~2 s

LETTERS = {"A": ["seq"], "B": ["conc"], "C": ["dlmem", "dldisk"], "D": ["json"], "E": [],
           "F": ["dedupe"], "G": ["resume"], "H": ["h1seq", "h1conc"], "I": ["h2conc32", "h2conc256"],
           "J": ["tlscold"], "K": ["sse"], "L": ["wssmall", "wslarge", "wspipe", "wsslow"],
           "M": ["httpcache", "httpcache1", "httpcachewarm", "httpcachewarm1"], "N": ["h3seq", "h3conc32"]}
ALL = ["seq", "conc", "dlmem", "dldisk", "json", "dedupe", "resume", "h1seq", "h1conc", "h2conc32", "h2conc256",
       "tlscold", "sse", "wssmall", "wslarge", "wspipe", "wsslow", "httpcache", "httpcache1", "httpcachewarm",
       "httpcachewarm1", "h3seq", "h3conc32"]
# The HTTPS workloads: A and B over HTTPS/HTTP/1.1 (H), B over HTTP/2 (I), 32 cold connections (J).
# "base" picks the server (h1: `ssl` only; h2: `ssl http2`), "http" the version the clients ask for.
TLS_WORKLOADS = ("h1seq", "h1conc", "h2conc32", "h2conc256", "tlscold")
# The default list: N only where its Python packages are installed (skipped otherwise; see main).
DEFAULT_WORKLOADS = "A,B,C,D,F,G,H,I,J,K,L,M,N"

PARAMS = {
    "seq": dict(path="/small.json", n=5000, c=1),
    "conc": dict(path="/small.json", n=50000, c=32),
    "dlmem": dict(path="/big.bin", n=1, c=1),
    "dldisk": dict(path="/big.bin", n=1, c=1),
    "json": dict(path="/medium.json", n=2000, c=8),
    "dedupe": dict(path="/logged/onemib.bin", n=100, c=32),
    "resume": dict(path="/throttled/resume.bin", n=1, c=1),
    "h1seq": dict(path="/small.json", n=5000, c=1, base="h1", http="1.1"),
    "h1conc": dict(path="/small.json", n=50000, c=32, base="h1", http="1.1"),
    "h2conc32": dict(path="/small.json", n=50000, c=32, base="h2", http="auto"),
    "h2conc256": dict(path="/small.json", n=50000, c=256, base="h2", http="auto"),
    "tlscold": dict(path="/small.json", n=32, c=32, base="h1", http="1.1"),
    # n is the number of events in the stream; "bytes" (the file's size) is filled in below.
    "sse": dict(path="/events.sse", n=1000000, c=1),
    # Workload L (WebSocket, bench-ws-server): n messages of `size` bytes echoed over one connection, c in
    # flight (1: send one, await its echo, repeat), after `warmup` messages; wsslow: the server floods n
    # messages of `size` bytes and the client keeps one per 10 ms (peak RSS is the figure).
    "wssmall": dict(path="/echo", n=100000, c=1, size=100, warmup=1000, base="ws"),
    "wslarge": dict(path="/echo", n=1000, c=1, size=MIB, warmup=10, base="ws"),
    "wspipe": dict(path="/echo", n=100000, c=16, size=100, warmup=1000, base="ws"),
    "wsslow": dict(path=f"/flood?count=500&size={MIB}", n=500, c=1, size=MIB, warmup=0, base="ws"),
    # Workload M (issue 22): n GETs in passes over CACHE_FILES files (the same order every pass), c in flight.
    "httpcache": dict(path="/cachebench/", n=10000, c=8),
    "httpcache1": dict(path="/cachebench/", n=10000, c=1),
    # The warm variant: the same files under /cachewarm/, every one with max-age; an untimed pass 0, in a
    # process of its own, stores all 1,000 (the revalidate/ half with max-age=1 s in that pass only); once
    # they are stale the timed process makes its 10,000 GETs: the fresh half are hits, the stale half are
    # revalidated once (the 304 makes them fresh for an hour) and are hits after that.
    "httpcachewarm": dict(path="/cachewarm/", n=10000, c=8),
    "httpcachewarm1": dict(path="/cachewarm/", n=10000, c=1),
    # Workload N (issue 41): the same 100-byte JSON from hypercorn (a Python server: a few hundred requests per
    # second, hence the smaller n), each client over HTTP/3, HTTP/2 and HTTP/1.1 (the versions in H3_CLIENTS).
    "h3seq": dict(path="/files/small.json", n=2000, c=1, base="h3"),
    "h3conc32": dict(path="/files/small.json", n=8000, c=32, base="h3"),
}
CACHE_WORKLOADS = ("httpcache", "httpcache1", "httpcachewarm", "httpcachewarm1")
WARM_CACHE_WORKLOADS = ("httpcachewarm", "httpcachewarm1")
# How long after the warm pass the short-lived entries are stale (their max-age is 1 s).
WARM_STALE_AFTER = 1.2
# Workload M's files: CACHE_FILES distinct files of CACHE_FILE_BYTES in WWW/cachebench/, the first half under
# fresh/ (nginx `expires 1h`: max-age, ETag, Last-Modified), the other half under revalidate/ (`Cache-Control:
# no-cache`: every reuse is a conditional request, answered 304); each location logs `$status $bytes_sent`
# and the request's X-Bench-Pass header to its own access log. The clients read the order from CACHE_ORDER.
CACHE_FILES = 1000
CACHE_FILE_BYTES = 10240
CACHE_DIR = os.path.join(WWW, "cachebench")
CACHE_ORDER = os.path.join(WORK, "cachebench-order.txt")
CACHE_LOGS = {"fresh": os.path.join(WORK, "logs", "cache-fresh.log"),
              "revalidate": os.path.join(WORK, "logs", "cache-revalidate.log")}
CACHE_STORE = os.path.join(WORK, "httpcache-store")
WS_WORKLOADS = ("wssmall", "wslarge", "wspipe", "wsslow")
WS_PORT = int(os.environ.get("WS_PORT", str(PORT + 3)))
BASES["ws"] = f"ws://127.0.0.1:{WS_PORT}"
H3_WORKLOADS = ("h3seq", "h3conc32")
H3_PORT = int(os.environ.get("H3_PORT", str(PORT + 4)))
BASES["h3"] = f"https://127.0.0.1:{H3_PORT}"
H3_LOG = os.path.join(WORK, "logs", "h3-server.log")
# Workload N's clients: (id, program, HTTP version). Courier's curl transport and pycurl run on H3_LIBCURL;
# AsyncHTTPClient has no HTTP/3.
H3_CLIENTS = [("courier-curl-h3", "bench-courier", "3"), ("courier-curl-h2", "bench-courier", "2"),
              ("courier-curl-h1", "bench-courier", "1.1"), ("pycurl-h3", "pycurl", "3"), ("pycurl-h2", "pycurl", "2"),
              ("pycurl-h1", "pycurl", "1.1"), ("ahc-h2", "bench-ahc", "2"), ("ahc-h1", "bench-ahc", "1.1")]

# Workload K: one text/event-stream file of SSE_EVENTS events, each `id: N` and one `data:` line holding
# exactly SSE_DATA_BYTES of JSON, {"sequence":N,"text":"…"} (N from 1), then the blank line that
# dispatches it.
SSE_EVENTS = PARAMS["sse"]["n"]
SSE_DATA_BYTES = 100
SSE_PAD = "The quick brown fox jumps over the lazy dog; " * 4


def sse_event(n):
    text = SSE_PAD[:SSE_DATA_BYTES - 23 - len(str(n))]  # 23: {"sequence":,"text":""}
    return f'id: {n}\ndata: {{"sequence":{n},"text":"{text}"}}\n\n'


def sse_size():
    # "id: " N "\n" "data: " DATA "\n" "\n": 13 bytes besides N and the data
    return sum(len(str(n)) for n in range(1, SSE_EVENTS + 1)) + SSE_EVENTS * (13 + SSE_DATA_BYTES)


PARAMS["sse"]["bytes"] = sse_size()

QUICK = os.environ.get("QUICK") == "1"
if QUICK:
    for _wl in ("seq", "conc", "json", "h1seq", "h1conc", "h2conc32", "h2conc256", "wssmall", "wslarge", "wspipe",
                "h3seq", "h3conc32"):
        PARAMS[_wl]["n"] //= 10
    for _wl in CACHE_WORKLOADS:
        PARAMS[_wl]["n"] = 2 * CACHE_FILES


def url_of(wl):
    return BASES[PARAMS[wl].get("base", "http")] + PARAMS[wl]["path"]

def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def say(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- set-up

def ensure_tools():
    missing = [pkg for tool, pkg in (("/usr/bin/time", "time"), ("nginx", "nginx"), ("curl", "curl"), ("openssl", "openssl"),
                                     ("wrk", "wrk"))
               if not (os.path.exists(tool) if tool.startswith("/") else shutil.which(tool))]
    if missing and os.geteuid() == 0 and shutil.which("apt-get"):
        say(f"installing {' '.join(missing)} with apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, env=env, check=False)
    for tool in ("/usr/bin/time", "nginx", "curl", "openssl"):
        if not (os.path.exists(tool) if tool.startswith("/") else shutil.which(tool)):
            sys.exit(f"{tool} is needed (apt-get install time nginx curl openssl)")


def build():
    if os.environ.get("BUILD", "1") == "0":
        return 0.0
    say("building the bench executables in release (the first AsyncHTTPClient build takes several minutes)")
    t0 = time.monotonic()
    p = subprocess.run(["swift", "build", "-c", "release", "--package-path", HERE])
    if p.returncode != 0:
        sys.exit("release build failed")
    return time.monotonic() - t0


def make_files(workloads=ALL):
    """The served files; the big random ones only when a chosen workload reads them."""
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
    needed = {"big.bin": {"dlmem", "dldisk"}, "onemib.bin": {"dedupe"}, "resume.bin": {"resume"}}
    big = [(name, size) for name, size in (("big.bin", GIB), ("onemib.bin", MIB), ("resume.bin", RESUME_BYTES))
           if needed[name] & set(workloads)]
    for name, size in big:
        path = os.path.join(WWW, name)
        if not os.path.exists(path) or os.path.getsize(path) != size:
            say(f"writing {size >> 20} MiB of random bytes to {path}")
            with open(path, "wb") as f:
                for _ in range(size // MIB):
                    f.write(os.urandom(MIB))
    if "sse" in workloads:
        path = os.path.join(WWW, "events.sse")
        if not os.path.exists(path) or os.path.getsize(path) != PARAMS["sse"]["bytes"]:
            say(f"writing {SSE_EVENTS:,} events ({PARAMS['sse']['bytes'] / MIB:.0f} MiB) to {path}")
            assert len(sse_event(1)) == len("id: 1\n") + len("data: ") + SSE_DATA_BYTES + 2
            with open(path, "w") as f:
                for start in range(1, SSE_EVENTS + 1, 10000):
                    f.write("".join(sse_event(n) for n in range(start, min(start + 10000, SSE_EVENTS + 1))))
            if os.path.getsize(path) != PARAMS["sse"]["bytes"]:
                sys.exit(f"{path} is not {PARAMS['sse']['bytes']} bytes")
        big.append(("events.sse", PARAMS["sse"]["bytes"]))
    if set(CACHE_WORKLOADS) & set(workloads):
        make_cache_files()
    # Read everything once so that it is in the page cache.
    for name, _ in big:
        with open(os.path.join(WWW, name), "rb") as f:
            while f.read(8 * MIB):
                pass


def cache_paths():
    """Workload M's paths, relative to /cachebench/: fresh/0000.bin … fresh/0499.bin, revalidate/0500.bin …"""
    half = CACHE_FILES // 2
    return [("fresh/" if i < half else "revalidate/") + "%04d.bin" % i for i in range(CACHE_FILES)]


def make_cache_files():
    """Workload M's files (kept between runs): each CACHE_FILE_BYTES long, its first line naming it (the clients
    check it), then bytes that differ from file to file; and the order of the passes, a fixed shuffle."""
    import random
    for path in cache_paths():
        full = os.path.join(CACHE_DIR, path)
        if os.path.exists(full) and os.path.getsize(full) == CACHE_FILE_BYTES:
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        head = f"courier cachebench {path}\n".encode()
        seed = int(path[-8:-4])
        body = head + bytes((seed * 31 + k * 7) % 251 for k in range(CACHE_FILE_BYTES - len(head)))
        with open(full, "wb") as f:
            f.write(body)
    order = cache_paths()
    random.Random(22).shuffle(order)
    with open(CACHE_ORDER, "w") as f:
        f.write("\n".join(order) + "\n")


def make_certs():
    """A private CA and a certificate for IP 127.0.0.1 / DNS localhost that it signs, made anew at
    every start-up by openssl (RSA-2048, SHA-256, valid 2 days), in WORK/tls. Every client trusts
    ca.crt: Courier through `.system(adding:)`, AsyncHTTPClient as its only root, curl `--cacert`."""
    os.makedirs(TLS_DIR, exist_ok=True)
    ext = os.path.join(TLS_DIR, "server.ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectKeyIdentifier=hash\n"
                "authorityKeyIdentifier=keyid\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    t = lambda name: os.path.join(TLS_DIR, name)
    steps = [
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2",
         "-keyout", t("ca.key"), "-out", t("ca.crt"), "-subj", "/O=Courier benchmarks/CN=Courier Bench CA",
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-keyout", t("server.key"),
         "-out", t("server.csr"), "-subj", "/O=Courier benchmarks/CN=127.0.0.1"],
        ["openssl", "x509", "-req", "-in", t("server.csr"), "-CA", t("ca.crt"), "-CAkey", t("ca.key"),
         "-set_serial", str(int.from_bytes(os.urandom(8), "big")), "-days", "2", "-sha256",
         "-extfile", ext, "-out", t("server.crt")],
    ]
    for cmd in steps:
        p = sh(cmd)
        if p.returncode != 0:
            sys.exit("openssl failed: " + " ".join(cmd) + "\n" + p.stderr)
    p = sh(["openssl", "verify", "-CAfile", t("ca.crt"), t("server.crt")])
    if p.returncode != 0:
        sys.exit("the generated certificate does not verify: " + p.stdout + p.stderr)


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
    # Workload M: what reached the server and what it sent, with the client's pass number (X-Bench-Pass).
    log_format cachebench '$status $bytes_sent "$http_x_bench_pass" $request_uri';
    map $http_x_bench_pass $cachewarm_expires {{
        "0" 1s;
        default 1h;
    }}
    # HTTPS (workloads H, I, J): every request logged with its connection's serial number, so that
    # run.py counts the connections of each run (distinct $connection values since the run began).
    log_format tlsbench '$msec $connection $server_port $server_protocol $ssl_protocol '
                        '"$ssl_session_reused" $status $request_uri';
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_certificate {work}/tls/server.crt;
    ssl_certificate_key {work}/tls/server.key;
    ssl_session_cache shared:bench:10m;
    ssl_session_timeout 1h;
    http2_max_concurrent_streams 128;  # nginx's default, written out: 256 in flight need 2 connections
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
        # Workload K: the event stream, a static file served as text/event-stream.
        location ~ \\.sse$ {{
            default_type text/event-stream;
        }}
        # Workload M: fresh for an hour (Expires and Cache-Control: max-age=3600, with nginx's ETag and
        # Last-Modified), and revalidated at every reuse (no-cache: If-None-Match, answered 304).
        location /cachebench/fresh/ {{
            expires 1h;
            access_log {work}/logs/cache-fresh.log cachebench;
        }}
        location /cachebench/revalidate/ {{
            add_header Cache-Control no-cache;
            access_log {work}/logs/cache-revalidate.log cachebench;
        }}
        # The warm variant: the same files, all with max-age and validators. Requests of the untimed pass
        # that fills the store (X-Bench-Pass: 0) get max-age=1 on the revalidate/ half, so that those
        # entries are stale when the timed run starts; every later answer (the 304s too) says an hour.
        location /cachewarm/fresh/ {{
            alias {work}/www/cachebench/fresh/;
            expires 1h;
            access_log {work}/logs/cache-fresh.log cachebench;
        }}
        location /cachewarm/revalidate/ {{
            alias {work}/www/cachebench/revalidate/;
            expires $cachewarm_expires;
            access_log {work}/logs/cache-revalidate.log cachebench;
        }}
    }}
    # HTTPS, HTTP/2 by ALPN (HTTP/1.1 for a client that offers only that).
    server {{
        listen 127.0.0.1:{tls_port} ssl http2 backlog=4096;
        root {work}/www;
        access_log {work}/logs/tls.log tlsbench buffer=256k flush=100ms;
        add_header X-Connection $connection always;
        add_header X-Protocol $server_protocol always;
        location / {{ }}
    }}
    # HTTPS, HTTP/1.1 only (no h2 in ALPN).
    server {{
        listen 127.0.0.1:{tls_h1_port} ssl backlog=4096;
        root {work}/www;
        access_log {work}/logs/tls.log tlsbench buffer=256k flush=100ms;
        add_header X-Connection $connection always;
        add_header X-Protocol $server_protocol always;
        location / {{ }}
    }}
}}
"""


class Nginx:
    def __init__(self):
        for d in ("logs", "tmp", "dl"):
            os.makedirs(os.path.join(WORK, d), exist_ok=True)
        self.conf = os.path.join(WORK, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(NGINX_CONF.format(work=WORK, port=PORT, rate=RESUME_RATE, tls_port=TLS_PORT, tls_h1_port=TLS_H1_PORT))
        self.master = None

    def start(self):
        self.stop_stale()
        make_certs()
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
        for base, version in ((BASES["h2"], "--http2"), (BASES["h1"], "--http1.1")):
            got = sh(["curl", "-s", version, "--cacert", CA, "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
                      base + "/small.json"]).stdout
            want = "200 2" if version == "--http2" else "200 1.1"
            if got != want:
                sys.exit(f"nginx does not answer on {base} with {version} (got {got!r})")

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


class WsServer:
    """Workload L's WebSocket echo server, bench-ws-server (hummingbird-websocket), on 127.0.0.1:WS_PORT;
    it prints "bench-ws-server listening on port P" once it accepts connections."""

    def __init__(self):
        self.proc = None
        self.port = None

    def start(self):
        global BASES
        self.proc = subprocess.Popen([os.path.join(BIN, "bench-ws-server"), "--port", str(WS_PORT)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # blocks until the server is up (or has exited)
        m = re.search(r"listening on port (\d+)", line)
        if not m or int(m.group(1)) <= 0:
            self.stop()
            sys.exit(f"bench-ws-server did not start: {line!r} {self.proc.stderr.read()[-600:]}")
        self.port = int(m.group(1))
        BASES["ws"] = f"ws://127.0.0.1:{self.port}"
        say(f"bench-ws-server (pid {self.proc.pid}) on {BASES['ws']}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def pycurl_probe(modules="pycurl"):
    """Imports `modules` (pycurl first) in a python3 of their own: the process, pycurl's version line and the
    libcurl files its wheel carries beside it (pycurl.libs/)."""
    probe = (f"import glob, os, {modules}; print(pycurl.version); "
             "print(' '.join(glob.glob(os.path.join(os.path.dirname(os.path.dirname(pycurl.__file__)), "
             "'pycurl.libs', 'libcurl-*.so.*'))))")
    p = sh([sys.executable, "-c", probe])
    version, files = (p.stdout.splitlines() + ["", ""])[:2]
    return p, version, files


def wheel_libcurl():
    """Workload N's libcurl: (file, pycurl's version line). H3_LIBCURL, or the libcurl beside the pycurl that
    python3 imports (the driver and Courier are to run on the same library); pycurl's must have HTTP/3 (nghttp3)."""
    p, version, files = pycurl_probe()
    if p.returncode != 0:
        sys.exit("workload N needs pycurl's manylinux wheel (libcurl 8.23 with HTTP/3): "
                 f"{sys.executable} -m pip install pycurl==7.49.0\n" + p.stderr[-400:])
    chosen = os.environ.get("H3_LIBCURL") or (files.split() or [""])[0]
    if not chosen or not os.path.isfile(chosen):
        sys.exit(f"workload N: no libcurl file ({chosen!r}); set H3_LIBCURL or install pycurl==7.49.0's wheel")
    if "nghttp3" not in version:
        sys.exit(f"workload N: pycurl's libcurl has no HTTP/3: {version}")
    return chosen, version


class H3Server:
    """Workload N's server: .ci/h3-server.py (hypercorn 0.18 with aioquic, Python, one process) serving WWW's
    files under /files/ over HTTP/3 on UDP H3_PORT and HTTP/1.1 and HTTP/2 (TLS, ALPN) on TCP H3_PORT, with
    nginx's certificate; every request logged (hypercorn's access log) with its protocol."""

    def __init__(self):
        self.proc = None
        self.log = None

    def start(self):
        self.log = open(H3_LOG, "a")
        script = os.path.join(ROOT, ".ci", "h3-server.py")
        self.proc = subprocess.Popen([sys.executable, script, "--serve", f"tcp={H3_PORT},quic={H3_PORT}",
                                      "--cert", os.path.join(TLS_DIR, "server.crt"),
                                      "--key", os.path.join(TLS_DIR, "server.key"), "--www", WWW,
                                      "--keep-alive-max-requests", "100000000"],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        url = BASES["h3"] + "/files/small.json"
        for _ in range(100):
            got = sh(["curl", "-s", "--http2", "--cacert", CA, "-o", "/dev/null", "-w", "%{http_code} %{http_version}", url]).stdout
            if got == "200 2" or self.proc.poll() is not None:
                break
            time.sleep(0.2)
        if got != "200 2":
            self.stop()
            sys.exit(f"h3-server.py does not answer on {url} over HTTP/2 (got {got!r}); see {H3_LOG}")
        p = sh(pycurl_cmd("h3seq", "3", n=1))
        if p.returncode != 0 or '"protocol": "HTTP/3"' not in p.stdout or '"errors": 0' not in p.stdout:
            self.stop()
            sys.exit(f"h3-server.py does not answer pycurl over HTTP/3: {p.stdout} {p.stderr[-600:]}")
        say(f"h3-server.py (hypercorn + aioquic, pid {self.proc.pid}) on {BASES['h3']}, TCP and UDP")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.log:
            self.log.close()
            self.log = None


def h3_log_since(offset):
    """What hypercorn logged of one workload-N run: requests by protocol ("3", "2", "1.1") and status, and
    connections (distinct client ports: a QUIC connection keeps its UDP port)."""
    time.sleep(0.2)
    protocols, statuses, ports = {}, {}, set()
    if os.path.exists(H3_LOG):
        with open(H3_LOG) as f:
            f.seek(offset)
            for line in f:
                m = re.search(r' [\d.]+:(\d+) .*"GET \S+ (\S+)" (\d{3}) ', line)
                if m:
                    ports.add(m.group(1))
                    protocols[m.group(2)] = protocols.get(m.group(2), 0) + 1
                    statuses[m.group(3)] = statuses.get(m.group(3), 0) + 1
    return dict(server_requests=sum(statuses.values()), server_protocols=protocols, server_statuses=statuses,
                connections=len(ports))


def log_offset(path=LOG):
    return os.path.getsize(path) if os.path.exists(path) else 0


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


def tls_log_since(offset):
    """What nginx saw of one HTTPS run: requests, distinct connections, protocols, TLS versions, and
    how many connections resumed a TLS session."""
    time.sleep(0.5)  # the HTTPS log is buffered (flush=100ms); a closing connection also needs a moment
    conns, reused, protocols, tls = set(), set(), {}, {}
    requests = 0
    if os.path.exists(TLS_LOG):
        with open(TLS_LOG) as f:
            f.seek(offset)
            for line in f:
                m = re.match(r'(\S+) (\d+) (\d+) (\S+) (\S+) "([^"]*)" (\d+) (\S+)', line)
                if not m:
                    continue
                requests += 1
                conn = int(m.group(2))
                if conn not in conns:
                    conns.add(conn)
                    protocols[m.group(4)] = protocols.get(m.group(4), 0) + 1
                    tls[m.group(5)] = tls.get(m.group(5), 0) + 1
                if m.group(6) == "r":
                    reused.add(conn)
    return dict(server_requests=requests, connections=len(conns), resumed_connections=len(reused),
                server_protocols=protocols, server_tls=tls)


WS_SERVER = WsServer()
H3_SERVER = H3Server()
H3_LIBCURL = None  # (file, pycurl's version line), found when workload N runs


# ---------------------------------------------------------------- clients

def swift_cmd(binary, client, wl, extra=()):
    p = PARAMS[wl]
    cmd = [os.path.join(BIN, binary), wl, "--client", client, "--url", url_of(wl),
           "--n", str(p["n"]), "--c", str(p["c"]), "--out", os.path.join(DL, "dl.bin"),
           "--store", os.path.join(WORK, "store")]
    if wl in TLS_WORKLOADS:
        cmd += ["--cacert", CA, "--http", p["http"]]
    if wl == "dedupe":
        cmd += ["--gate-pid", "{gate}"]
    if wl == "resume":
        cmd += ["--expect-bytes", str(RESUME_BYTES)]
    if wl in WS_WORKLOADS:
        cmd += ["--size", str(p["size"]), "--warmup", str(p["warmup"])]
    if wl in CACHE_WORKLOADS:
        cmd[cmd.index("--store") + 1] = CACHE_STORE  # emptied before every run
        cmd += ["--urls", CACHE_ORDER]
    return cmd + list(extra)


def pycurl_cmd(wl, http, n=None):
    """Workload N's C peer: bench-pycurl.py (pycurl on the wheel's libcurl, the same loops as bench-courier)."""
    p = PARAMS[wl]
    return [sys.executable, os.path.join(HERE, "bench-pycurl.py"), wl, "--client", f"pycurl-h{http[0]}",
            "--url", url_of(wl), "--n", str(n or p["n"]), "--c", str(p["c"]), "--cacert", CA, "--http", http]


def h3_clients(wl):
    """Workload N: every client of H3_CLIENTS against h3-server.py; Courier with COURIER_LIBCURL=H3_LIBCURL."""
    cs = []
    for cid, program, http in H3_CLIENTS:
        if program == "pycurl":
            cmd = pycurl_cmd(wl, http)
        else:
            cmd = swift_cmd(program, cid.rsplit("-", 1)[0], wl, ["--cacert", CA, "--http", http])
            if program == "bench-courier":
                cmd = ["env", f"COURIER_LIBCURL={H3_LIBCURL[0]}"] + cmd
        cs.append((cid, cmd, parse_swift))
    return only(cs)


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
    url = url_of(wl)
    base = ["curl", "-s", "--no-progress-meter"]
    if wl in TLS_WORKLOADS:
        # The query's i=N in %{url_effective} picks out the first wave of transfers: the cold phase.
        fmt = "%{http_code} %{time_total} %{size_download} %{url_effective} %{http_version}\n"
        base += ["--cacert", CA, "--http1.1" if p["http"] == "1.1" else "--http2", "-o", "/dev/null", "-w", fmt]
        if wl == "h1seq":
            return base + [f"{url}?i=[1-{p['n']}]"]
        # HTTP/1.1: all transfers start at once, one connection each (--parallel-immediate). HTTP/2:
        # curl's default for -Z, waiting for the first connection to multiplex on it (with
        # --parallel-immediate it would open a connection per transfer instead).
        par = ["-Z", "--parallel-max", str(p["c"])] + (["--parallel-immediate"] if p["http"] == "1.1" else [])
        return base + par + [f"{url}?i=[1-{p['n']}]"]
    if wl == "seq":  # one process, one connection; time_total per transfer for the percentiles
        return base + ["-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download}\n", f"{url}?i=[1-{p['n']}]"]
    if wl in ("conc", "json", "dedupe"):
        return base + ["-Z", "--parallel-max", str(p["c"]), "--parallel-immediate", "-o", "/dev/null",
                       "-w", "%{http_code} %{time_total} %{size_download}\n", f"{url}?i=[1-{p['n']}]"]
    if wl in ("dlmem", "dldisk"):
        out = "/dev/null" if wl == "dlmem" else os.path.join(DL, "dl.bin")
        return base + ["-o", out, "-w", "%{http_code} %{time_total} %{size_download}\n", url]
    if wl == "sse":  # raw bytes, no parsing: the ceiling (-N: no output buffering)
        return base + ["-N", "-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download} %{content_type}\n", url]
    raise KeyError(wl)


def parse_curl(wl):
    def parse(out, wall):
        rows = [l.split() for l in out.splitlines() if l.strip()]
        errors = sum(1 for r in rows if r[0] != "200")
        r = dict(n=len(rows), errors=errors, seconds=wall, rps=len(rows) / wall,
                 bytes=sum(int(float(x[2])) for x in rows))
        if wl in TLS_WORKLOADS:
            # The cold phase, as the Swift clients report it: the first wave's transfers (1 for h1seq,
            # c otherwise: URLs i=1…c of the glob) all start with curl's transfer loop; its end is the
            # slowest of them.
            # curl's process start and option parsing are left out, as the Swift clients leave out theirs.
            wave = PARAMS[wl]["c"]
            index = lambda x: int(re.search(r"[?&]i=(\d+)", x[3]).group(1)) if len(x) > 3 and "i=" in x[3] else 0
            first = [x for x in rows if 1 <= index(x) <= wave]
            if first:
                r.update(cold_ms=max(float(x[1]) for x in first) * 1e3, cold_requests=len(first),
                         cold_errors=sum(1 for x in first if x[0] != "200"), protocol="HTTP/" + rows[0][4])
            if wl == "tlscold":
                r.update(seconds=r["cold_ms"] / 1e3, rps=len(rows) / (r["cold_ms"] / 1e3))
        if wl in ("seq", "h1seq"):
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
        if wl == "sse":
            # curl's own transfer time; events/s = the stream's events ÷ that time (curl parses none)
            secs = float(rows[0][1])
            want = (200, PARAMS["sse"]["bytes"], "text/event-stream")
            got = (int(rows[0][0]), r["bytes"], rows[0][3] if len(rows[0]) > 3 else "")
            r.update(n=SSE_EVENTS, seconds=secs, rps=SSE_EVENTS / secs, mbps=r["bytes"] / 1e6 / secs,
                     content_type=got[2], errors=0 if got == want else 1)
        return r
    return parse


def s_time_cmd():
    """The reference cost of a full handshake: `openssl s_time -new` against the HTTP/1.1 HTTPS server
    (one handshake at a time, new session each, the CA loaded once and the chain verified)."""
    return ["openssl", "s_time", "-connect", f"127.0.0.1:{TLS_H1_PORT}", "-new", "-time", str(S_TIME_SECONDS),
            "-CAfile", CA, "-verify", "1"]


def parse_s_time(out, wall):
    m = re.search(r"(\d+) connections in ([\d.]+)s; ([\d.]+) connections/user sec", out)
    if not m:
        raise RuntimeError("no s_time figures: " + out[-400:])
    n = int(m.group(1))
    # Handshakes per second of wall time (the process runs S_TIME_SECONDS and finishes the one under way).
    return dict(n=n, seconds=wall, handshakes_per_s=n / wall, ms_per_handshake=wall * 1e3 / n,
                s_time_user_s=float(m.group(2)), errors=0 if n else 1)


def only(cs):
    keep = os.environ.get("ONLY")
    return [c for c in cs if c[0] in set(keep.split(","))] if keep else cs


BASELINE_BIN = os.environ.get("BASELINE_BIN")
# FAST_PATHS_AB's workloads (A, B, H, I).
BASELINE_WORKLOADS = {"seq", "conc", "h1seq", "h1conc", "h2conc32", "h2conc256"}


def baseline_modes(wl):
    """The Courier clients that BASELINE_BIN's bench-courier runs as "<mode>@base" in a workload: each mode the
    workload judges Courier by (A–M; N runs on another libcurl and is left out)."""
    if wl in H3_WORKLOADS:
        return []
    if wl == "dedupe":
        return ["courier-curl", "courier-curl+dedupe"]
    if wl in CACHE_WORKLOADS:
        return ["courier-curl+cache"]
    return ["courier-curl"]


# FAST_PATHS_VARIANTS: one trick of FastPaths.swift off alone (COURIER_FAST_PATHS=-name), or "all" (=0).
FAST_PATH_TRICKS = ("host", "batch", "callerpass", "trust", "memo", "bytes", "disk", "wsinline", "loopyield")


def fast_path_variants():
    names = [n.strip() for n in os.environ.get("FAST_PATHS_VARIANTS", "").split(",") if n.strip()]
    unknown = [n for n in names if n != "all" and n not in FAST_PATH_TRICKS]
    if unknown:
        raise SystemExit(f"FAST_PATHS_VARIANTS: unknown trick(s) {unknown}; known: all, {', '.join(FAST_PATH_TRICKS)}")
    return names


def fast_path_variant_client(wl, name):
    """The client that runs Courier with one trick off (or all, for "all") in a workload where Courier's
    curl client runs: courier-curl in A, B, H, I, J and L, courier-curl+cache in M."""
    if wl in BASELINE_WORKLOADS or wl in WS_WORKLOADS or wl == "tlscold":
        mode = "courier-curl"
    elif wl in CACHE_WORKLOADS:
        mode = "courier-curl+cache"
    else:
        return None
    value, suffix = ("0", "nofast") if name == "all" else (f"-{name}", f"no-{name}")
    return (f"{mode}@{suffix}", ["env", f"COURIER_FAST_PATHS={value}"] + swift_cmd("bench-courier", mode, wl), parse_swift)


def clients_for(wl):
    cs = []
    add = lambda cid, cmd, parser: cs.append((cid, cmd, parser))
    for mode in baseline_modes(wl) if BASELINE_BIN else []:
        base = swift_cmd("bench-courier", mode, wl)
        add(f"{mode}@base", [os.path.join(BASELINE_BIN, "bench-courier")] + base[1:], parse_swift)
    if os.environ.get("FAST_PATHS_AB") == "1" and wl in BASELINE_WORKLOADS:
        add("courier-curl@nofast", ["env", "COURIER_FAST_PATHS=0"] + swift_cmd("bench-courier", "courier-curl", wl), parse_swift)
    for name in fast_path_variants():
        variant = fast_path_variant_client(wl, name)
        if variant:
            add(*variant)
    if wl in H3_WORKLOADS:
        return h3_clients(wl)
    if wl in WS_WORKLOADS:
        # L: websocket-kit driven from its event loop (its idiomatic, fastest use), websocket-kit from a task
        # as Courier's loop is written, and Courier's public WebSocket API (curl transport: the default).
        add("wskit", swift_cmd("bench-wskit", "wskit", wl), parse_swift)
        if wl != "wsslow":
            add("wskit+async", swift_cmd("bench-wskit", "wskit+async", wl), parse_swift)
        add("courier-curl", swift_cmd("bench-courier", "courier-curl", wl), parse_swift)
        return only(cs)
    if wl in CACHE_WORKLOADS:
        # M: Courier (curl transport) with the HTTP cache on and off, URLSession with URLCache on and off,
        # AsyncHTTPClient (no cache: the network-only reference).
        add("ahc", swift_cmd("bench-ahc", "ahc", wl), parse_swift)
        add("urlsession", swift_cmd("bench-urlsession", "urlsession", wl), parse_swift)
        add("urlsession+cache", swift_cmd("bench-urlsession", "urlsession+cache", wl), parse_swift)
        add("courier-curl", swift_cmd("bench-courier", "courier-curl", wl), parse_swift)
        add("courier-curl+cache", swift_cmd("bench-courier", "courier-curl+cache", wl), parse_swift)
        return only(cs)
    if wl == "sse":
        # K: the curl CLI's raw bytes (the ceiling), AsyncHTTPClient's streamed body through
        # mattt/EventSource's parser, Courier's events() and its typed decoding (curl transport).
        add("curl", curl_cmd(wl), parse_curl(wl))
        add("ahc+eventsource", swift_cmd("bench-ahc-sse", "ahc+eventsource", wl), parse_swift)
        add("courier-curl", swift_cmd("bench-courier", "courier-curl", wl), parse_swift)
        add("courier-curl+typed", swift_cmd("bench-courier", "courier-curl+typed", wl), parse_swift)
        return only(cs)
    if wl in TLS_WORKLOADS:
        # URLSession (and Courier's URLSession transport) cannot trust a private CA on Linux, nor choose
        # the HTTP version: the HTTPS workloads run the curl CLI, AsyncHTTPClient and Courier (curl).
        p = PARAMS[wl]
        if wl in ("h1seq", "h1conc") and shutil.which("wrk"):
            add("wrk", ["wrk", "-t1", f"-c{p['c']}", "-d5s", "--latency", url_of(wl)], parse_wrk)
        if wl == "tlscold":
            add("openssl-s_time", s_time_cmd(), parse_s_time)
        add("curl", curl_cmd(wl), parse_curl(wl))
        add("ahc", swift_cmd("bench-ahc", "ahc", wl), parse_swift)
        add("courier-curl", swift_cmd("bench-courier", "courier-curl", wl), parse_swift)
        if wl == "tlscold":
            # Not judged: the same with only the CA trusted, to show what the system store costs.
            add("courier-curl+onlyca", swift_cmd("bench-courier", "courier-curl+onlyca", wl), parse_swift)
        return only(cs)
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
    return only(cs)


TIME_FIELDS = {
    "peak_rss_kb": r"Maximum resident set size \(kbytes\): (\d+)",
    "cpu_user": r"User time \(seconds\): ([\d.]+)",
    "cpu_sys": r"System time \(seconds\): ([\d.]+)",
    "vol_cs": r"Voluntary context switches: (\d+)",
}


def timed(cmd, timeout=900):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # GNU time prints CPU time to 10 ms; the children's rusage has microseconds (and includes GNU time's
    # own, well under a millisecond), which the short runs of J need.
    rusage = {"cpu_ms": (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3}
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


def process_cpu_ms(pid):
    """A process's CPU time so far (user + system, from /proc; 10 ms resolution), or None."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1e3 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cache_log_since(offsets):
    """What nginx saw of one workload-M run, per location: requests by status, bytes sent ($bytes_sent,
    headers included), and the same for requests sent after the client's first pass (X-Bench-Pass > 1)."""
    time.sleep(0.2)  # nginx writes a request's line when it ends
    out = {}
    warm = 0
    for name, path in CACHE_LOGS.items():
        statuses, later_statuses = {}, {}
        sent = later_sent = 0
        if os.path.exists(path):
            with open(path) as f:
                f.seek(offsets[name])
                for line in f:
                    m = re.match(r'(\d+) (\d+) "([^"]*)" (\S+)', line)
                    if not m:
                        continue
                    status, nbytes = m.group(1), int(m.group(2))
                    if m.group(3) == "0":
                        warm += 1  # the untimed pass that filled the store (warm variant)
                        continue
                    statuses[status] = statuses.get(status, 0) + 1
                    sent += nbytes
                    if m.group(3) not in ("", "-", "1"):
                        later_statuses[status] = later_statuses.get(status, 0) + 1
                        later_sent += nbytes
        out[f"{name}_statuses"] = statuses
        out[f"{name}_bytes_sent"] = sent
        out[f"{name}_later_statuses"] = later_statuses
        out[f"{name}_later_bytes_sent"] = later_sent
    out["warm_requests"] = warm
    out["server_requests"] = sum(sum(out[f"{n}_statuses"].values()) for n in CACHE_LOGS)
    out["server_bytes_sent"] = sum(out[f"{n}_bytes_sent"] for n in CACHE_LOGS)
    for status in ("200", "304"):
        out[f"server_{status}"] = sum(out[f"{n}_statuses"].get(status, 0) for n in CACHE_LOGS)
    return out


def dir_usage(path):
    """Files and bytes under a directory (the cache's disk store after a run)."""
    files = size = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                size += os.path.getsize(os.path.join(root, name))
                files += 1
            except OSError:
                pass
    return files, size


def run_one(nginx, cid, cmd, parser, wl):
    offset = log_offset()
    cache_offsets = {name: log_offset(path) for name, path in CACHE_LOGS.items()}
    if wl in CACHE_WORKLOADS:
        # A fresh, empty cache directory for every run.
        shutil.rmtree(CACHE_STORE, ignore_errors=True)
        os.makedirs(CACHE_STORE, exist_ok=True)
    tls_offset = log_offset(TLS_LOG)
    server_cpu = process_cpu_ms(nginx.worker)
    ws_cpu = process_cpu_ms(WS_SERVER.proc.pid) if WS_SERVER.proc else None
    h3_offset = log_offset(H3_LOG)
    h3_cpu = process_cpu_ms(H3_SERVER.proc.pid) if wl in H3_WORKLOADS and H3_SERVER.proc else None
    if wl in WARM_CACHE_WORKLOADS and cmd != "curl-resume":
        # The earlier process: one untimed pass 0 over the list fills the store; then wait until the
        # entries it stored with max-age=1 are stale.
        warm = list(cmd)
        warm[warm.index("--n") + 1] = str(CACHE_FILES)
        p, _, _ = timed(warm + ["--first-pass", "0"])
        if p.returncode != 0:
            return dict(failed=True, rc=p.returncode, stderr="warm pass: " + p.stderr[-1500:], wall=0)
        time.sleep(WARM_STALE_AFTER)
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
    if wl in CACHE_WORKLOADS:
        r.update(cache_log_since(cache_offsets))
        r["store_files"], r["store_bytes"] = dir_usage(CACHE_STORE)
    if wl in TLS_WORKLOADS:
        r.update(tls_log_since(tls_offset))
        after = process_cpu_ms(nginx.worker)
        if server_cpu is not None and after is not None:
            r["server_cpu_ms"] = after - server_cpu  # nginx's worker over the whole run, warm-up included
    if wl in ("dldisk", "resume"):
        path = os.path.join(DL, "dl.bin")
        if os.path.exists(path):
            os.unlink(path)
    if wl in WS_WORKLOADS and WS_SERVER.proc:
        after = process_cpu_ms(WS_SERVER.proc.pid)
        if ws_cpu is not None and after is not None:
            r["server_cpu_ms"] = after - ws_cpu  # bench-ws-server over the whole run, connection and warm-up included
    if wl in H3_WORKLOADS:
        r.update(h3_log_since(h3_offset))
        after = process_cpu_ms(H3_SERVER.proc.pid) if H3_SERVER.proc else None
        if h3_cpu is not None and after is not None:
            r["server_cpu_ms"] = after - h3_cpu  # hypercorn over the whole run, connection and warm-up included
    if wl == "sse" and r.get("rps"):
        r["mbps"] = r["rps"] * PARAMS["sse"]["bytes"] / SSE_EVENTS / 1e6  # the stream's bytes at that event rate
    expected = {"dlmem": GIB, "dldisk": GIB}.get(wl)
    if expected and r.get("bytes") != expected:
        r["errors"] = r.get("errors", 0) + 1
    return r


def h3_missing():
    """Why workload N cannot run here (pycurl's wheel with HTTP/3, hypercorn, aioquic), or None."""
    p, version, files = pycurl_probe("pycurl, hypercorn, aioquic")
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return f"{last} (pip install pycurl==7.49.0 hypercorn==0.18.0 aioquic==1.7.2 for {sys.executable})"
    if "nghttp3" not in version:
        return f"pycurl's libcurl has no HTTP/3 ({version})"
    if not (os.environ.get("H3_LIBCURL") or files.split()):
        return "no libcurl file beside pycurl (set H3_LIBCURL)"
    return None


def count_allocations():
    """Allocations per request (allocations.py: its own nginx on free ports, after the timed workloads, so it
    disturbs none of them): Courier and AsyncHTTPClient, and BASELINE_BIN's bench-alloc-courier when it has one.
    Its result, or what went wrong, goes into the summary and the report."""
    say("counting allocations per request (allocations.py)")
    out = os.path.join(WORK, "allocations.json")
    if os.path.exists(out):
        os.unlink(out)
    cmd = [sys.executable, os.path.join(HERE, "allocations.py"), "--build", "0", "--json", out]
    if QUICK:
        cmd += ["--n", "500"]
    if BASELINE_BIN and os.path.exists(os.path.join(BASELINE_BIN, "bench-alloc-courier")):
        cmd += ["--baseline-bin", BASELINE_BIN]
    t0 = time.monotonic()
    p = sh(cmd)
    seconds = time.monotonic() - t0
    if p.returncode != 0 or not os.path.exists(out):
        say(f"allocations.py failed ({p.returncode}): {p.stderr[-600:]}")
        return dict(failed=True, rc=p.returncode, stderr=p.stderr[-1500:], seconds=seconds)
    with open(out) as f:
        result = json.load(f)
    result["seconds"] = seconds
    try:
        with open(os.path.join(HERE, "allocation-thresholds.json")) as f:
            result["thresholds"] = json.load(f)["courier"]  # CI's gate, shown beside the counts
    except (OSError, KeyError, ValueError):
        pass
    say(f"allocations counted in {seconds:.0f} s")
    return result


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
            nio_ssl = versions.get("swift-nio-ssl")
        except (OSError, KeyError, ValueError):
            nio = nio_ssl = None
    head = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", "Sources"]).stdout.strip()
    return dict(library=head + (" + uncommitted changes in Sources/" if dirty else ""), cpu=cpu, cores=os.cpu_count(), mem_gib=round(int(mem) / 1024 / 1024, 1),
                kernel=platform.release(), os=sh("grep PRETTY_NAME /etc/os-release | cut -d= -f2").stdout.strip().strip('"'),
                swift=swift_v[0] if swift_v else "?", libcurl=libcurl + (f" (Debian {deb})" if deb else ""),
                curl=curl_v.split(" (")[0], wrk=(sh(["wrk", "--version"]).stdout + sh(["wrk", "--version"]).stderr).split(" [")[0].strip() if shutil.which("wrk") else "not installed",
                ahc=ahc, nio=nio or "?", nio_ssl=nio_ssl or "?",
                openssl=sh(["openssl", "version"]).stdout.strip(),
                tls_ports=dict(h2=TLS_PORT, h1=TLS_H1_PORT))


def main():
    started = time.monotonic()
    start_wall = datetime.datetime.now().astimezone()
    wanted = os.environ.get("WORKLOADS", DEFAULT_WORKLOADS).split(",")
    workloads = []
    for w in wanted:
        for name in LETTERS.get(w.strip().upper(), [w.strip()]):
            if name in ALL and name not in workloads:
                workloads.append(name)
    skipped = {}
    if "WORKLOADS" not in os.environ and any(wl in H3_WORKLOADS for wl in workloads):
        # The default list: N runs when its Python packages are there, and is skipped (said so in the report)
        # when not; asked for by name (WORKLOADS=N) it stops the run with what is missing instead.
        missing = h3_missing()
        if missing:
            say(f"skipping workload N (HTTP/3): {missing}")
            skipped["N"] = missing
            workloads = [wl for wl in workloads if wl not in H3_WORKLOADS]
    allocations = os.environ.get("ALLOCATIONS", "0" if "WORKLOADS" in os.environ else "1") == "1"
    ensure_tools()
    build_seconds = build()
    make_files(workloads)
    os.makedirs(DL, exist_ok=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    raw_path = os.path.join(HERE, "results", start_wall.strftime("raw-%Y%m%d-%H%M%S.jsonl"))
    info = machine()
    info["load_at_start"] = os.getloadavg()
    info["started"] = start_wall.strftime("%Y-%m-%d %H:%M %Z")
    info["skipped"] = skipped
    if BASELINE_BIN:
        commit = sh(["git", "-C", BASELINE_BIN, "rev-parse", "--short", "HEAD"]).stdout.strip()
        info["baseline"] = dict(bin=BASELINE_BIN, commit=commit or "?")
    nginx = Nginx()
    info["nginx"] = nginx.version()
    if any(wl in H3_WORKLOADS for wl in workloads):
        global H3_LIBCURL
        H3_LIBCURL = wheel_libcurl()
        info["h3_libcurl"] = dict(file=H3_LIBCURL[0], pycurl=H3_LIBCURL[1])
        info["h3_server"] = sh([sys.executable, "-c", "import importlib.metadata as m; "
                                "print(' '.join(f'{p} {m.version(p)}' for p in ('hypercorn', 'aioquic')))"]).stdout.strip()
    nginx.start()
    results = []
    try:
        if any(wl in WS_WORKLOADS for wl in workloads):
            WS_SERVER.start()
        if any(wl in H3_WORKLOADS for wl in workloads):
            H3_SERVER.start()
        with open(raw_path, "w") as raw:
            raw.write(json.dumps(dict(machine=info)) + "\n")
            for wl in workloads:
                wl_started = time.monotonic()
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
                                 for k2 in ("rps", "mbps", "events", "messages", "p50_us", "cold_ms", "cold_cpu_ms", "ms_per_handshake",
                                            "peak_rss_kb", "errors", "server_requests", "server_200", "server_304",
                                            "connections", "protocol", "failed")
                                 if k2 in r}
                        say(f"[{wl} r{rnd + 1} load {load:.2f}] {cid}: {brief}")
                info.setdefault("workload_seconds", {})[wl] = time.monotonic() - wl_started
    finally:
        nginx.stop()
        WS_SERVER.stop()
        H3_SERVER.stop()
    if allocations:
        try:
            info["allocations"] = count_allocations()
        except Exception as e:  # the timed results are kept and reported whatever happens here
            info["allocations"] = dict(failed=True, stderr=repr(e))
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
    say(f"HTTPS: {BASES['h2']} (HTTP/2 by ALPN) and {BASES['h1']} (HTTP/1.1 only), CA {CA}")
    say(f"nginx serving {WWW} on {BASE} (master {nginx.master}, worker {nginx.worker}); stop: python3 {sys.argv[0]} stop")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("serve", "stop"):
        serve(sys.argv[1])
    else:
        main()
