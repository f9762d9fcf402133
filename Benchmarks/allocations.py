#!/usr/bin/env python3
"""Allocations per request, counted exactly (BENCHMARKS.md, "Allocations per request").

Builds bench-alloc-courier (and, unless --courier-only, bench-alloc-ahc) in release, starts a private
nginx on loopback (plain HTTP/1.1, and HTTPS with HTTP/2 by ALPN with a CA made here by openssl), and
runs each client under LD_PRELOAD of ordo-one's malloc-interposer: warm-up requests first (connections
made, first-use caches filled), then N counted requests; every malloc/calloc/realloc/posix_memalign
call of the process, on every thread, is counted. The server runs in another process, so only the
client's allocations count. A count does not depend on the machine's load the way a time does, so it
can gate CI:

  python3 Benchmarks/allocations.py                       # the table (Markdown)
  python3 Benchmarks/allocations.py --courier-only --check Benchmarks/allocation-thresholds.json
  python3 Benchmarks/allocations.py --courier-only --write Benchmarks/allocation-thresholds.json

--check fails (exit 1) when a Courier count is above its threshold; --write records today's counts
as thresholds with a margin (--margin, 5 % by default) so that a regression fails and noise does not.
Counts are not quite independent of the machine's load: on a busy machine a request waits where it
would not have, and the suspension allocates (seen: up to 4 % more, steady for minutes at a time). So
run --write on a quiet machine and raise each threshold to the highest count seen on a busy one (+ the
margin), as allocation-thresholds.json does.
Each client runs --runs times (3) per workload, in a process of its own each time, and the fewest
allocations count: on a busy machine a request now and then waits where it would not have, and the
suspension allocates; that only ever adds, so the minimum is the count without it.
Options: --build 0 (skip the build), --n N (counted requests, default 2000), --port P (plain HTTP on P,
HTTPS on P+1; by default two free ports), --json FILE (also write the counts as JSON: run.py's report reads
them), --baseline-bin DIR (also count DIR/bench-alloc-courier, another checkout's .build/release with its own
libMallocInterposerSwift.so, as client "courier@base": the previous main in the same run).
"""
import argparse, json, os, shutil, signal, socket, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
BODY = '{"id":42,"name":"' + "x" * 84 + '"}' + "\n" * 0
# workload id -> (description, arguments, needs TLS)
WORKLOADS = [
    ("A", "HTTP/1.1 GET of a 100-byte JSON, one at a time", ["seq", "--http", "1.1"], False),
    ("B", "HTTP/1.1 GET of a 100-byte JSON, 32 in flight", ["conc", "--c", "32", "--http", "1.1"], False),
    ("I1", "HTTP/2 (HTTPS) GET of a 100-byte JSON, one at a time", ["seq", "--http", "2"], True),
    ("I32", "HTTP/2 (HTTPS) GET of a 100-byte JSON, 32 in flight", ["conc", "--c", "32", "--http", "2"], True),
]


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def make_certs(d):
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
    t = lambda n: os.path.join(d, n)
    for cmd in (
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-keyout", t("ca.key"),
         "-out", t("ca.crt"), "-subj", "/CN=Courier allocations CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-keyout", t("server.key"), "-out", t("server.csr"),
         "-subj", "/CN=127.0.0.1"],
        ["openssl", "x509", "-req", "-in", t("server.csr"), "-CA", t("ca.crt"), "-CAkey", t("ca.key"), "-set_serial", "1",
         "-days", "2", "-sha256", "-extfile", t("server.ext"), "-out", t("server.crt")],
    ):
        p = sh(cmd)
        if p.returncode != 0:
            sys.exit("openssl failed: " + " ".join(cmd) + "\n" + p.stderr)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(d, port, tls_port):
    os.makedirs(os.path.join(d, "www"), exist_ok=True)
    with open(os.path.join(d, "www", "small.json"), "w") as f:
        f.write(BODY)
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off; keepalive_requests 1000000; keepalive_timeout 300s; default_type application/json;
  client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp; uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;
  server {{ listen 127.0.0.1:{port}; root {d}/www; }}
  server {{ listen 127.0.0.1:{tls_port} ssl http2; root {d}/www; ssl_certificate {d}/server.crt;
           ssl_certificate_key {d}/server.key; ssl_protocols TLSv1.2 TLSv1.3; http2_max_concurrent_streams 128; }}
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    log = open(os.path.join(d, "nginx.out"), "w")
    proc = subprocess.Popen([nginx, "-c", conf, "-p", d], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    for _ in range(100):
        if sh(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{port}/small.json"]).stdout == "200":
            return proc
        if proc.poll() is not None:
            sys.exit("nginx did not start: " + open(os.path.join(d, "nginx.out")).read())
        time.sleep(0.1)
    proc.terminate()  # the master stops its worker
    proc.wait(10)
    sys.exit("nginx did not answer on port %d" % port)


def run_client(binary, interposer, workload_args, url, n, cacert):
    env = dict(os.environ, LD_PRELOAD=interposer)
    cmd = [binary] + workload_args[:1] + ["--url", url, "--n", str(n)] + workload_args[1:]
    if cacert:
        cmd += ["--cacert", cacert]
    p = sh(cmd, env=env, timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--courier-only", action="store_true")
    ap.add_argument("--check")
    ap.add_argument("--write")
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--build", default="1")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3, help="processes per client and workload; the fewest allocations count")
    ap.add_argument("--port", type=int, default=0, help="plain HTTP port (0: a free one); HTTPS on the next free one")
    ap.add_argument("--json", help="also write the counts to this file as JSON")
    ap.add_argument("--baseline-bin", help="another checkout's .build/release: its bench-alloc-courier counts as courier@base")
    a = ap.parse_args()
    clients = ["courier"] if a.courier_only else ["courier", "ahc"]
    if a.build != "0":
        for c in clients:
            p = subprocess.run(["swift", "build", "-c", "release", "--package-path", HERE, "--product", f"bench-alloc-{c}"])
            if p.returncode != 0:
                sys.exit(f"building bench-alloc-{c} failed")
    bindir = sh(["swift", "build", "-c", "release", "--package-path", HERE, "--show-bin-path"]).stdout.strip()
    interposer = os.path.join(bindir, "libMallocInterposerSwift.so")
    if not os.path.exists(interposer):
        sys.exit(f"{interposer} is missing: build bench-alloc-courier first")
    # client -> (executable, interposer)
    programs = {c: (os.path.join(bindir, f"bench-alloc-{c}"), interposer) for c in clients}
    if a.baseline_bin:
        base = os.path.abspath(a.baseline_bin)
        programs["courier@base"] = (os.path.join(base, "bench-alloc-courier"), os.path.join(base, "libMallocInterposerSwift.so"))
        for path in programs["courier@base"]:
            if not os.path.exists(path):
                sys.exit(f"--baseline-bin: {path} is missing")
    d = tempfile.mkdtemp(prefix="courier-allocations-")
    os.chmod(d, 0o755)  # nginx's worker runs as nobody
    os.makedirs(os.path.join(d, "tmp"))
    make_certs(d)
    results = {}
    port = a.port or free_port()
    tls_port = a.port + 1 if a.port else free_port()
    nginx = start_nginx(d, port, tls_port)
    try:
        for wid, _, args, tls in WORKLOADS:
            url = f"https://127.0.0.1:{tls_port}/small.json" if tls else f"http://127.0.0.1:{port}/small.json"
            for c, (binary, preload) in programs.items():
                runs = [run_client(binary, preload, args, url, a.n, os.path.join(d, "ca.crt") if tls else "")
                        for _ in range(a.runs)]
                # The fewest: what scheduling adds (a wait that a busy machine turns into a suspension,
                # with its allocations) only ever adds, so the minimum is the count without it.
                r = min(runs, key=lambda run: run["mallocs_per_request"])
                r["runs"] = [run["mallocs_per_request"] for run in runs]
                results[(wid, c)] = r
                print(f"{wid} {c}: {r['mallocs_per_request']:.1f} mallocs/request ({r['mallocs']} in {r['n']}, "
                      f"{r['bytes_per_request']:.0f} bytes/request; runs: {', '.join('%.1f' % x for x in r['runs'])})", file=sys.stderr)
    finally:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(10)
        except subprocess.TimeoutExpired:
            nginx.kill()
        shutil.rmtree(d, ignore_errors=True)

    print("| workload | " + " | ".join(f"{c}: mallocs/request" for c in programs) + " |")
    print("|---|" + "---:|" * len(programs))
    for wid, desc, _, _ in WORKLOADS:
        print(f"| {wid}: {desc} | " + " | ".join(f"{results[(wid, c)]['mallocs_per_request']:.1f}" for c in programs) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"n": a.n, "runs": a.runs, "clients": list(programs),
                       "workloads": [dict(id=wid, description=desc) for wid, desc, _, _ in WORKLOADS],
                       "results": [dict(results[(wid, c)], workload=wid, client=c)
                                   for wid, *_ in WORKLOADS for c in programs]}, f, indent=1)
            f.write("\n")

    if a.write:
        thresholds = {wid: round(results[(wid, "courier")]["mallocs_per_request"] * (1 + a.margin), 1) for wid, *_ in WORKLOADS}
        with open(a.write, "w") as f:
            json.dump({"comment": f"Courier's mallocs per request (allocations.py), today's count + {a.margin:.0%}",
                       "courier": thresholds}, f, indent=2)
            f.write("\n")
        print(f"wrote {a.write}", file=sys.stderr)
    if a.check:
        with open(a.check) as f:
            thresholds = json.load(f)["courier"]
        failed = 0
        for wid, *_ in WORKLOADS:
            measured = results[(wid, "courier")]["mallocs_per_request"]
            limit = thresholds[wid]
            ok = measured <= limit
            failed += not ok
            print(f"{wid}: {measured:.1f} mallocs/request, threshold {limit} {'ok' if ok else 'ABOVE THE THRESHOLD'}")
        if failed:
            sys.exit(f"{failed} allocation count(s) above the threshold in {a.check}: "
                     "fix the regression, or lower/raise the threshold with --write on purpose")
        print("allocations per request within the thresholds")


if __name__ == "__main__":
    main()
