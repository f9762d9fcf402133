"""Turns run.py's results into BENCHMARKS.md (also usable alone: python3 report.py results/raw-....jsonl;
`python3 report.py --h3 results/raw-....jsonl` prints workload N's section only)."""
import json
import os
import statistics
import sys

ORDER = ["openssl-s_time", "wrk", "curl", "urlsession", "ahc", "ahc+eventsource", "courier-curl", "courier-urlsession", "transport-curl",
         "transport-urlsession", "courier-curl+dedupe", "courier-urlsession+dedupe", "courier-curl+onlyca",
         "courier-curl+typed", "wskit", "wskit+async", "urlsession+cache", "courier-curl+cache"]
LABELS = {
    "wrk": "wrk 4.1 (anchor; 5 s loop)",
    "curl": "curl CLI (one process)",
    "urlsession": "URLSession, raw async",
    "ahc": "AsyncHTTPClient",
    "courier-curl": "**Courier**, curl transport",
    "courier-urlsession": "**Courier**, URLSession transport",
    "transport-curl": "CurlTransport driven directly",
    "transport-urlsession": "URLSessionTransport driven directly",
    "courier-curl+dedupe": "**Courier**, curl transport, dedupe on",
    "courier-urlsession+dedupe": "**Courier**, URLSession transport, dedupe on",
    "openssl-s_time": "`openssl s_time -new` (handshake reference)",
    "courier-curl+onlyca": "Courier, curl transport, `.only([CA])` (not judged)",
    "ahc+eventsource": "AsyncHTTPClient + mattt/EventSource parser",
    "courier-curl+typed": "**Courier** `decodingEvents(of: Tick.self)`, curl transport",
    "wskit": "websocket-kit 2.16, driven from its event loop",
    "wskit+async": "websocket-kit 2.16, driven from a task (as Courier's loop)",
}
# Workload L's rows.
WS_LABELS = {"courier-curl": "**Courier** `session.webSocket(url)`, curl transport"}
WS_WORKLOADS = ("wssmall", "wslarge", "wspipe", "wsslow")
# Workload K's rows: the same id means something else there (courier-curl is events()).
SSE_LABELS = {"curl": "curl CLI `-N` (raw bytes, no parsing: the ceiling)",
              "courier-curl": "**Courier** `events()`, curl transport"}
# The HTTPS workloads run the plain ones' code (run.py, BenchSupport): what each is, and its warm-up.
KIND = {"h1seq": "seq", "h1conc": "conc", "h2conc32": "conc", "h2conc256": "conc", "tlscold": "cold",
        "h3seq": "seq", "h3conc32": "conc"}
TLS_WORKLOADS = ("h1seq", "h1conc", "h2conc32", "h2conc256", "tlscold")
# Workload M's rows: the HTTP cache on and off (issue 22).
CACHE_WORKLOADS = ("httpcache", "httpcache1", "httpcachewarm", "httpcachewarm1")
WARM_CACHE_WORKLOADS = ("httpcachewarm", "httpcachewarm1")
CACHE_LABELS = {"ahc": "AsyncHTTPClient (no cache: network-only reference)",
                "urlsession": "URLSession, no cache",
                "urlsession+cache": "URLSession with `URLCache` (64 MiB memory, 256 MiB disk), `.useProtocolCachePolicy`",
                "courier-curl": "**Courier**, curl transport, HTTP cache off",
                "courier-curl+cache": "**Courier**, curl transport, HTTP cache on (64 MiB memory + disk)"}
CACHE_ORDER = ["ahc", "urlsession", "urlsession+cache", "courier-curl", "courier-curl+cache"]
WORKLOAD_ORDER = (["seq", "conc", "dlmem", "dldisk", "json", "dedupe", "resume"] + list(TLS_WORKLOADS) + ["sse"]
                  + list(WS_WORKLOADS) + list(CACHE_WORKLOADS) + ["h3seq", "h3conc32"])
# Workload N's rows (issue 41): client id → (client, HTTP version); ratios are taken within a version or a client.
H3_WORKLOADS = ("h3seq", "h3conc32")
H3_ROWS = [("courier-curl-h3", "**Courier**, curl transport", "3"), ("courier-curl-h2", "**Courier**, curl transport", "2"),
           ("courier-curl-h1", "**Courier**, curl transport", "1.1"), ("pycurl-h3", "pycurl (libcurl's C API)", "3"),
           ("pycurl-h2", "pycurl (libcurl's C API)", "2"), ("pycurl-h1", "pycurl (libcurl's C API)", "1.1"),
           ("ahc-h2", "AsyncHTTPClient", "2"), ("ahc-h1", "AsyncHTTPClient", "1.1")]


def kind(wl):
    return KIND.get(wl, wl)


def titles(params):
    # Raw files from before a workload existed have no parameters for it: default them.
    defaults = {"h1seq": (5000, 1), "h1conc": (50000, 32), "h2conc32": (50000, 32), "h2conc256": (50000, 256),
                "tlscold": (32, 32)}
    params = dict(params)
    for wl, (n0, c0) in defaults.items():
        params.setdefault(wl, {"n": n0, "c": c0})
    n = lambda wl: f"{params[wl]['n']:,}"
    return {
        "seq": f"A. {n('seq')} GETs of a 100-byte JSON, one at a time",
        "conc": f"B. {n('conc')} GETs of a 100-byte JSON, {params['conc']['c']} in flight",
        "dlmem": "C1. 1 GiB download into memory",
        "dldisk": "C2. 1 GiB download to a file on disk",
        "json": f"D. {n('json')} GETs of a 64 KiB JSON decoded into a Decodable, {params['json']['c']} in flight",
        "dedupe": f"F. Dedupe: {n('dedupe')} identical concurrent GETs of a 1 MiB body",
        "resume": "G. Resume: a 64 MiB download interrupted at 50%, finished by a new session",
        "h1seq": f"H. HTTPS, HTTP/1.1: {n('h1seq')} GETs of a 100-byte JSON, one at a time (A over TLS)",
        "h1conc": f"H. HTTPS, HTTP/1.1: {n('h1conc')} GETs of a 100-byte JSON, {params['h1conc']['c']} in flight (B over TLS)",
        "h2conc32": f"I. HTTP/2: {n('h2conc32')} GETs of a 100-byte JSON, {params['h2conc32']['c']} in flight",
        "h2conc256": f"I. HTTP/2: {n('h2conc256')} GETs of a 100-byte JSON, {params['h2conc256']['c']} in flight",
        "tlscold": f"J. TLS cold start: {params['tlscold']['c']} new HTTPS/1.1 connections at once",
        "sse": f"K. Event stream: {n('sse') if 'sse' in params else '1,000,000'} Server-Sent Events (100 bytes of JSON "
               "data each) from one static text/event-stream file",
        **{wl: ws_title(wl, params.get(wl)) for wl in WS_WORKLOADS},
        **{wl: cache_title(params.get(wl)) for wl in CACHE_WORKLOADS},
    }


def cache_title(p):
    if not p:
        return "M. HTTP cache"
    flight = "one at a time" if p["c"] == 1 else f"{p['c']} in flight"
    if p.get("path") == "/cachewarm/":
        return (f"M-warm. HTTP cache from a store an earlier process filled: {p['n']:,} GETs over 1,000 distinct "
                f"10 KiB files with max-age (half fresh, half stale: revalidated once), {flight}")
    return (f"M. HTTP cache: {p['n']:,} GETs over 1,000 distinct 10 KiB files (half fresh, half revalidated at "
            f"every reuse), {flight}")


def ws_size(size):
    return f"{size >> 20} MiB" if size >= 1 << 20 and size % (1 << 20) == 0 else f"{size:,} B"


def ws_title(wl, p):
    if not p:
        return wl
    if wl == "wsslow":
        return (f"L-slow. WebSocket slow consumer: the server floods {p['n']:,} messages of {ws_size(p['size'])}, "
                "the client keeps one per 10 ms")
    name = {"wssmall": "L-small", "wslarge": "L-large", "wspipe": "L-pipelined"}[wl]
    flight = "one at a time (send, await the echo, repeat)" if p["c"] == 1 else f"{p['c']} in flight"
    return f"{name}. WebSocket echo: {p['n']:,} messages of {ws_size(p['size'])}, {flight}, one connection"


WHAT = {
    "seq": "Requests per second (higher is better), p50/p99 latency of one request. Swift clients time "
           "themselves after a 100-request warm-up; curl is one process over a URL glob on one connection "
           "(wall clock, so it includes process start); wrk runs `-t1 -c1` for 5 s.",
    "conc": "Requests per second with 32 requests in flight (32 worker tasks, each issuing its share back "
            "to back) and up to 32 connections; 100-request warm-up. curl: `-Z --parallel-max 32`; wrk: `-c32`, 5 s.",
    "dlmem": "MB/s (10^6 bytes/s) for one GET of 1 GiB of random bytes kept whole in memory "
             "(`serializingData()`, `data(for:)`, `body.collect`). curl cannot keep a body in memory: its row "
             "writes to /dev/null.",
    "dldisk": "MB/s for one GET of 1 GiB written to a file: Courier `download(_:to: .file(...))`, URLSession "
              "`download(for:)` + move, AsyncHTTPClient streaming chunks into a file descriptor, curl `-o file`. "
              "The file is deleted and `sync` runs before the next run.",
    "h1seq": "A over HTTPS on nginx's `ssl`-only server (no h2 in ALPN): Courier `httpVersion = .http1_1`, "
             "AsyncHTTPClient `.http1Only`, curl `--http1.1`; one connection. Steady state after the warm-up, as A; "
             "the cold phase (the first request of a new client: its handshake) is in the cold-phase table below.",
    "h1conc": "B over HTTPS/HTTP/1.1, 32 connections (nginx's count per run in the table: the warm-up included). "
              "curl: `-Z --parallel-immediate --parallel-max 32 --http1.1`; wrk: `-c32`, 5 s (no certificate check).",
    "h2conc32": "B over HTTP/2 (ALPN) on nginx's `ssl http2` server: Courier and AsyncHTTPClient `httpVersion = "
                ".automatic`, curl `--http2 -Z --parallel-max N` (without `--parallel-immediate`, so that curl "
                "multiplexes). Connections per run are counted by nginx; nginx allows 128 streams per connection "
                "(`http2_max_concurrent_streams`), so the ideal is 1 connection here and 2 with 256 in flight.",
    "json": "Requests per second; each 65,536-byte body is decoded with Foundation's JSONDecoder into "
            "`Catalog { items: [Item] (852), pad }` (Courier: `serializingDecodable(Catalog.self)`; the others "
            "decode in the worker task). curl only downloads (no decoding), so its ratio is an upper bound. "
            "JSONDecoder dominates this workload (see perf-baseline.md: ~5.7 ms of CPU per body).",
}


WS_WHAT = ("One WebSocket connection over plain TCP on loopback to `bench-ws-server` (hummingbird 2 with "
           "hummingbird-websocket, SwiftNIO, 2 event loops): `/echo` writes every data frame back as it came, no "
           "extensions (no compression), no automatic pings, frames up to 4 MiB; `/flood` sends binary messages as "
           "fast as TCP takes them. Every message is binary. Clients: Courier's public API, `session.webSocket(url, "
           "configuration:)` with `offersCompression = false`, `try await socket.send(.binary(data))` and `for try "
           "await message in socket.messages`; websocket-kit 2.16 driven from its event loop (the next message sent "
           "from the `onBinary` callback: its idiomatic and cheapest use), and the same loop as Courier's, from a "
           "task (`try await send(raw:opcode:)`, echoes through an `AsyncStream` fed by `onBinary`). Messages/s "
           "after a warm-up (1,000 small or 10 large messages) on the same connection, connection set-up not timed; "
           "MB/s counts the echoed payload received; latency is each message's send to its echo. CPU µs/message: "
           "the client process's user+system time (GNU `time`, connection and warm-up included) ÷ the messages it "
           "echoed; server CPU: bench-ws-server's over the run (from `/proc`). Slow consumer: Courier reads with "
           "its default `receiveBufferSize` (4 MiB) and one `Task.sleep(10 ms)` per message; websocket-kit has no "
           "read backpressure, so its row shows what piles up in the application's own queue.")


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(x, digits=None):
    if x is None:
        return "—"
    if digits is None:
        digits = 0 if abs(x) >= 100 else (1 if abs(x) >= 10 else 2)
    return f"{x:,.{digits}f}"


def ratio(a, b, invert=False):
    if a is None or b is None or a == 0 or b == 0:
        return "—"
    return f"{(b / a if invert else a / b):.2f}"


def warmup(client, wl, n, c):
    if client in ("wrk", "curl", "openssl-s_time"):
        return 0
    if kind(wl) in ("seq", "conc", "json"):
        return max(c, min(100, n // 50))
    return 0


def counts(runs, key):
    """Per-run values of an integer field, e.g. "32, 32, 32"."""
    vals = [r.get(key) for r in runs if r.get(key) is not None]
    return ", ".join(str(int(v)) for v in vals) if vals else "—"


def protocol(runs):
    """The protocols the server saw (per connection) and the client reported, e.g. "HTTP/2.0 (TLSv1.3)"."""
    seen = set()
    for r in runs:
        for proto in (r.get("server_protocols") or {}):
            tls = "/".join(sorted((r.get("server_tls") or {}).keys()))
            seen.add(proto + (f" {tls}" if tls else ""))
    return ", ".join(sorted(seen)) or "—"


class Rows:
    def __init__(self, results, wl, variants=False):
        """One workload's runs by client. Variants ("mode@base", "mode@nofast", ...: another build of Courier, or
        Courier with a switch turned) are left out unless asked for: the workload tables and targets show only the
        code under test, and the variants have tables of their own (variant_table)."""
        self.wl = wl
        self.by = {}
        for r in results:
            if r.get("workload") == wl and (variants or "@" not in r["client"]):
                self.by.setdefault(r["client"], []).append(r)
        self.clients = [c for c in ORDER if c in self.by] + [c for c in self.by if c not in ORDER]

    def ok(self, c):
        return [r for r in self.by.get(c, []) if not r.get("failed")]

    def m(self, c, key):
        return med([r.get(key) for r in self.ok(c)])

    def loads(self, c):
        ls = [r.get("load1") for r in self.by.get(c, []) if r.get("load1") is not None]
        return f"{min(ls):.1f}–{max(ls):.1f}" if ls else "—"

    def errors(self, c):
        failed = sum(1 for r in self.by.get(c, []) if r.get("failed"))
        errs = sum(int(r.get("errors") or 0) for r in self.ok(c))
        return failed, errs


def cpu_per_request(rows, c):
    """Median CPU µs per request of a client in A, B, D, H or I: user+system time (GNU `time`) ÷ every request
    the process made, warm-up included."""
    return med([cpu_per_unit(r, c, rows.wl)[0] for r in rows.ok(c)])


def throughput_table(results, wl):
    rows = Rows(results, wl)
    tls = wl in TLS_WORKLOADS
    key = "rps" if kind(wl) in ("seq", "conc", "json") else "mbps"
    unit = "req/s" if key == "rps" else "MB/s"
    base = {b: rows.m(b, key) for b in ("urlsession", "ahc", "curl")}
    head = ["client", f"median {unit}"] + ([] if tls else ["÷ URLSession"]) + ["÷ AHC", "÷ curl"]
    if kind(wl) == "seq":
        head += ["p50 µs", "p99 µs"]
    head += ["peak RSS MiB", "CPU µs/req" if key == "rps" else "CPU s", "runs", "load1", "errors"]
    if kind(wl) == "seq":
        head.insert(-3, "vol. switches/req")
    if tls:
        head[-3:-3] = ["nginx CPU µs/req", "connections (nginx, per run)", "protocol (nginx)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        v = rows.m(c, key)
        cells = [LABELS.get(c, c), f"**{fmt(v)}**" if c.startswith("courier") else fmt(v)]
        cells += ([] if tls else [ratio(v, base["urlsession"])]) + [ratio(v, base["ahc"]), ratio(v, base["curl"])]
        if kind(wl) == "seq":
            cells += [fmt(rows.m(c, "p50_us")), fmt(rows.m(c, "p99_us"))]
        rss = rows.m(c, "peak_rss_kb")
        cells.append(fmt(rss / 1024 if rss else None, 1))
        cpu = [((r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0)) for r in ok]
        if key == "rps":
            cells.append(fmt(cpu_per_request(rows, c)) if c != "wrk" else "—")
        else:
            cells.append(fmt(med(cpu), 2))
        if kind(wl) == "seq":
            sw = [r.get("vol_cs") / ((r.get("n") or 1) + warmup(c, wl, r.get("n") or 0, 1)) for r in ok if r.get("vol_cs") is not None]
            cells.append(fmt(med(sw), 1) if c != "wrk" else "—")
        if tls:
            # The server's side of the cost: nginx's worker CPU over the run ÷ the requests it logged.
            srv = med([r["server_cpu_ms"] * 1e3 / r["server_requests"] for r in ok
                       if r.get("server_cpu_ms") is not None and r.get("server_requests")])
            cells += [fmt(srv) if srv is not None else "—",
                      counts(ok, "connections") if c != "wrk" else "—", protocol(ok) if c != "wrk" else "—"]
        cells.append(", ".join(fmt(r.get(key)) for r in ok))
        cells.append(rows.loads(c))
        failed, errs = rows.errors(c)
        cells.append(f"{errs}" + (f" ({failed} runs failed)" if failed else ""))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out), rows


def cold_table(results, workloads):
    """The cold phase of the HTTPS throughput runs: a new client's first wave (1 request for the
    sequential workload, c at once otherwise), from before the client is made to its last response."""
    head = ["workload", "client", "first wave", "median ms to the wave's responses", "time ÷ curl's",
            "time ÷ AHC's", "CPU ms in the phase", "CPU ms per request of the wave", "protocol (client)",
            "runs ms", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for wl in workloads:
        rows = Rows(results, wl)
        base = {b: rows.m(b, "cold_ms") for b in ("curl", "ahc")}
        for c in rows.clients:
            ok = [r for r in rows.ok(c) if r.get("cold_ms") is not None]
            if not ok:
                continue
            ms, cpu = rows.m(c, "cold_ms"), rows.m(c, "cold_cpu_ms")
            wave = int(ok[0].get("cold_requests") or 0)
            protos = sorted({r.get("protocol") for r in ok if r.get("protocol")})
            errs = sum(int(r.get("cold_errors") or 0) for r in ok)
            out.append("| " + " | ".join([
                {"h1seq": "H (A)", "h1conc": "H (B)"}.get(wl, f"I ({PARAMS_C.get(wl, '')} in flight)"),
                LABELS.get(c, c), str(wave), f"**{fmt(ms)}**" if c.startswith("courier") else fmt(ms),
                ratio(ms, base["curl"]), ratio(ms, base["ahc"]),
                fmt(cpu) if cpu is not None else "—", fmt(cpu / wave, 2) if cpu is not None and wave else "—",
                ", ".join(protos) or "—", ", ".join(fmt(r.get("cold_ms")) for r in ok), str(errs)]) + " |")
    return "\n".join(out)


PARAMS_C = {"h2conc32": 32, "h2conc256": 256}


def spread(rows, c):
    """When the cold wave's transfers started, from Courier's metrics: "first–last" ms after the wave began."""
    a, b = rows.m(c, "cold_first_start_ms"), rows.m(c, "cold_last_start_ms")
    return f"{fmt(a, 1)}–{fmt(b, 1)}" if a is not None and b is not None else "—"


def tls_times(rows, c):
    a, b = rows.m(c, "cold_tls_p50_ms"), rows.m(c, "cold_tls_max_ms")
    return f"{fmt(a, 1)} / {fmt(b, 1)}" if a is not None and b is not None else "—"


def tlscold_table(results):
    rows = Rows(results, "tlscold")
    ref = rows.m("openssl-s_time", "ms_per_handshake")
    curl = rows.m("curl", "cold_ms")
    head = ["client", "median ms to 32 responses", "time ÷ curl's", "process wall ms",
            "CPU ms per handshake (client made → 32 responses)", "CPU ms per handshake (whole process ÷ 32)",
            "÷ s_time ms/handshake", "connections (nginx)", "resumed sessions", "client made in ms",
            "transfers started (ms into the wave)", "TLS handshake ms p50 / max", "peak RSS MiB", "runs ms", "load1", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        failed, errs = rows.errors(c)
        rss = rows.m(c, "peak_rss_kb")
        # The process's CPU time to the microsecond (run.py reads its children's rusage); GNU time's
        # 10 ms figures when an older raw file has no cpu_ms.
        proc = med([r["cpu_ms"] if r.get("cpu_ms") is not None else ((r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0)) * 1e3
                    for r in ok])
        if c == "openssl-s_time":
            n = rows.m(c, "n")
            out.append("| " + " | ".join([
                LABELS[c], "—", "—", fmt((rows.m(c, "seconds") or 0) * 1e3),
                "—", fmt(proc / n, 2) if proc is not None and n else "—",
                f"**{fmt(ref, 2)}** ms wall per handshake ({fmt(rows.m(c, 'handshakes_per_s'))}/s, one at a time)",
                counts(ok, "n") + " handshakes", "—", "—", "—", "—", fmt(rss / 1024 if rss else None, 1),
                ", ".join(fmt(r.get("ms_per_handshake"), 2) for r in ok), rows.loads(c),
                f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
            continue
        ms = rows.m(c, "cold_ms")
        window = med([r["cold_cpu_ms"] / 32 for r in ok if r.get("cold_cpu_ms") is not None])
        per_proc = proc / 32 if proc is not None else None
        judged = window if window is not None else per_proc
        out.append("| " + " | ".join([
            LABELS.get(c, c), f"**{fmt(ms)}**" if c == "courier-curl" else fmt(ms), ratio(ms, curl),
            fmt((rows.m(c, "wall") or 0) * 1e3), fmt(window, 2) if window is not None else "—",
            fmt(per_proc, 2), ratio(judged, ref), counts(ok, "connections"), counts(ok, "resumed_connections"),
            fmt(rows.m(c, "cold_setup_ms"), 1) if rows.m(c, "cold_setup_ms") is not None else "—",
            spread(rows, c), tls_times(rows, c),
            fmt(rss / 1024 if rss else None, 1), ", ".join(fmt(r.get("cold_ms")) for r in ok), rows.loads(c),
            f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
    return "\n".join(out), rows


def sse_table(results, params):
    """K: events per second through each client's parser (curl: the file's events ÷ its transfer time)."""
    rows = Rows(results, "sse")
    p = params.get("sse", {})
    per_event = p["bytes"] / p["n"] if p.get("bytes") and p.get("n") else None
    base = {b: rows.m(b, "rps") for b in ("ahc+eventsource", "curl")}
    head = ["client", "median events/s", "÷ AHC + EventSource", "÷ curl", "MB/s of the stream", "peak RSS MiB",
            "CPU s", "CPU ns/event", "events counted (per run)", "runs events/s", "load1", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        v = rows.m(c, "rps")
        rss = rows.m(c, "peak_rss_kb")
        cpu = med([(r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0) for r in ok])
        n = rows.m(c, "n")
        counted = "—" if c == "curl" else ", ".join(f"{int(r['events']):,}" for r in ok if r.get("events") is not None)
        failed, errs = rows.errors(c)
        out.append("| " + " | ".join([
            SSE_LABELS.get(c, LABELS.get(c, c)), f"**{fmt(v)}**" if c.startswith("courier") else fmt(v),
            ratio(v, base["ahc+eventsource"]), ratio(v, base["curl"]),
            fmt(v * per_event / 1e6 if v and per_event else None), fmt(rss / 1024 if rss else None, 1),
            fmt(cpu, 2), fmt(cpu * 1e9 / n if cpu is not None and n else None), counted,
            ", ".join(fmt(r.get("rps")) for r in ok), rows.loads(c),
            f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
    return "\n".join(out), rows


def sse_targets(results, met):
    """Issue 20's targets, from K's rows of this run."""
    r = Rows(results, "sse")
    c, t = r.m("courier-curl", "rps"), r.m("courier-curl+typed", "rps")
    a, k = r.m("ahc+eventsource", "rps"), r.m("curl", "rps")
    out = []
    if c and a:
        out.append(("K: Courier `events()` ≥ 1.5× AsyncHTTPClient + EventSource", f"{c / a:.2f}×", met(c / a >= 1.5)))
    if c and k:
        out.append(("K: Courier `events()` ≥ 0.5× the curl CLI's raw byte rate", f"{c / k:.2f}×", met(c / k >= 0.5)))
    if t and a and k:
        out.append(("K: Courier `decodingEvents(of:)` ÷ AsyncHTTPClient + EventSource (which does not decode), "
                    "and ÷ curl (not a target)", f"{t / a:.2f}×, {t / k:.2f}×", "—"))
    return out


def ws_table(results, wl):
    """L: messages per second echoed over one connection (or, for wsslow, the flood read slowly)."""
    rows = Rows(results, wl)
    base = {b: rows.m(b, "rps") for b in ("wskit", "wskit+async")}
    if wl == "wsslow":
        head = ["client", "peak RSS MiB (median)", "peak RSS MiB (per run)", "messages read (per run)", "seconds",
                "CPU s", "load1", "errors"]
    else:
        head = ["client", "median messages/s", "÷ websocket-kit (event loop)", "÷ websocket-kit (task)",
                "MB/s echoed", "p50 µs", "p99 µs", "peak RSS MiB", "CPU µs/message", "server CPU µs/message",
                "runs messages/s", "load1", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        v = rows.m(c, "rps")
        rss = rows.m(c, "peak_rss_kb")
        cpu = med([(r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0) for r in ok])
        failed, errs = rows.errors(c)
        label = WS_LABELS.get(c, LABELS.get(c, c))
        if wl == "wsslow":
            out.append("| " + " | ".join([
                label, f"**{fmt(rss / 1024 if rss else None, 1)}**" if c.startswith("courier") else fmt(rss / 1024 if rss else None, 1),
                ", ".join(fmt(r["peak_rss_kb"] / 1024, 1) for r in ok if r.get("peak_rss_kb")),
                ", ".join(f"{int(r['messages']):,}" for r in ok if r.get("messages") is not None),
                fmt(rows.m(c, "seconds"), 1), fmt(cpu, 2), rows.loads(c),
                f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
            continue
        # CPU per message over every message the process echoed (warm-up included), as in A–D.
        total = med([(r.get("n") or 0) + (r.get("warmup") or 0) for r in ok]) or None
        server = med([r.get("server_cpu_ms") for r in ok])
        out.append("| " + " | ".join([
            label, f"**{fmt(v)}**" if c.startswith("courier") else fmt(v),
            ratio(v, base["wskit"]), ratio(v, base["wskit+async"]), fmt(rows.m(c, "mbps")),
            fmt(rows.m(c, "p50_us")), fmt(rows.m(c, "p99_us")), fmt(rss / 1024 if rss else None, 1),
            fmt(cpu * 1e6 / total if cpu is not None and total else None),
            fmt(server * 1e3 / total if server is not None and total else None),
            ", ".join(fmt(r.get("rps")) for r in ok), rows.loads(c),
            f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
    return "\n".join(out), rows


def ws_targets(results, workloads, met):
    """Issue 21's targets, from L's rows of this run (websocket-kit: its event-loop-driven row)."""
    out = []
    for wl, goal, what in (("wssmall", 1.0, "100 B messages"), ("wslarge", 0.9, "1 MiB messages")):
        if wl in workloads:
            r = Rows(results, wl)
            c, k, a = r.m("courier-curl", "rps"), r.m("wskit", "rps"), r.m("wskit+async", "rps")
            if c and k:
                out.append((f"L: echo of {what}, one at a time ≥ {goal:.1f}× websocket-kit",
                            f"{c / k:.2f}×" + (f" ({c / a:.2f}× its task-driven loop)" if a else ""), met(c / k >= goal)))
    if "wspipe" in workloads:
        r = Rows(results, "wspipe")
        c, k = r.m("courier-curl", "rps"), r.m("wskit", "rps")
        if c and k:
            out.append(("L (not a target): 100 B messages, 16 in flight, ÷ websocket-kit", f"{c / k:.2f}×", "—"))
    if "wsslow" in workloads:
        r = Rows(results, "wsslow")
        rss = [x["peak_rss_kb"] / 1024 for x in r.ok("courier-curl") if x.get("peak_rss_kb")]
        if rss:
            out.append(("L: peak RSS ≤ 64 MiB with a slow consumer (largest of the runs)", f"{max(rss):.1f} MiB",
                        met(max(rss) <= 64)))
    return out


CACHE_WHAT = ("nginx serves 1,000 distinct files of 10,240 bytes: 500 under a location with `expires 1h` "
              "(`Cache-Control: max-age=3600` and `Expires`, with nginx's `ETag` and `Last-Modified`: fresh for the "
              "whole run) and 500 under one with `add_header Cache-Control no-cache` (storable, but every reuse must "
              "be revalidated: `If-None-Match`, answered `304 Not Modified`). Each client makes 10,000 GETs: 10 passes "
              "over the 1,000 URLs in one fixed shuffled order (the same for every client and pass), the next URL "
              "taken from a shared counter by each of the workers (8, or 1), with a new, empty cache directory for "
              "every run and no warm-up (the first pass fills the cache, and is timed with the rest). Every body is "
              "checked (10,240 bytes, first line naming its file); a wrong one is an error. Each request carries "
              "`X-Bench-Pass: N`, and both locations log `$status $bytes_sent` and that header to their own access "
              "log, so run.py counts what reached nginx in each run, and what after the first pass. \"MiB over the "
              "wire\" is nginx's `$bytes_sent` (headers and bodies). Courier counts its responses by "
              "`response.source`; the cache's store is a `ResponseCache(memoryCapacity: 64 MiB, diskDirectory:)` "
              "(cache off: the same session code with `httpCache = .disabled`). URLSession cannot tell where a "
              "response came from: nginx's log does, and after the run the client counts the URLs its `URLCache` "
              "holds. Passes 2–10 req/s: the 9,000 requests after the first pass began, ÷ their time.\n\n"
              "M-warm is the same client code on the same files, served under /cachewarm/ where every file has "
              "`max-age` and validators: the spec's \"half fresh, half needing revalidation\" as a cache meets it "
              "when an app starts again. Before each timed run, the same client in a process of its own makes one "
              "untimed pass over the 1,000 URLs (`X-Bench-Pass: 0`, not counted in nginx's columns): with the cache "
              "on it stores all of them, the fresh/ half with `max-age=3600` and the revalidate/ half with "
              "`max-age=1` (nginx gives that pass alone one second, by a `map` on the header). 1.2 s later, once "
              "that half is stale, the timed process starts with the same directory and an empty memory tier: the "
              "fresh half are hits read from disk, the stale half are revalidated (`If-None-Match`, `304` with "
              "`max-age=3600`), and every later pass is hits. The clients without a cache make the same untimed pass "
              "(it only warms nginx's page cache).")


def num(x):
    """A count: "1,000", or "—"."""
    return "—" if x is None else f"{int(round(x)):,}"


def cache_table(results, wl):
    rows = Rows(results, wl)
    rows.clients = [c for c in CACHE_ORDER if c in rows.by] + [c for c in rows.by if c not in CACHE_ORDER]
    base = {b: rows.m(b, "rps") for b in ("courier-curl", "urlsession+cache", "ahc")}
    head = ["client", "median req/s", "÷ Courier cache off", "÷ URLSession + URLCache", "÷ AHC", "passes 2–10 req/s",
            "requests nginx saw: 200 / 304 (median)", "fresh URLs requested after pass 1 (per run)",
            "revalidated URLs after pass 1: 200 / 304 (median)", "MiB over the wire (nginx)", "… after pass 1",
            "responses by source (Courier, median)", "cache on disk after the run", "peak RSS MiB", "CPU µs/req",
            "runs req/s", "load1", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        v = rows.m(c, "rps")
        rss = rows.m(c, "peak_rss_kb")
        cpu = med([((r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0)) * 1e6 / r["n"] for r in ok if r.get("n")])
        fresh_later = ", ".join(num(sum((r.get("fresh_later_statuses") or {}).values())) for r in ok) or "—"
        reval_200 = med([(r.get("revalidate_later_statuses") or {}).get("200", 0) for r in ok])
        reval_304 = med([(r.get("revalidate_later_statuses") or {}).get("304", 0) for r in ok])
        later_bytes = med([(r.get("fresh_later_bytes_sent") or 0) + (r.get("revalidate_later_bytes_sent") or 0) for r in ok])
        sources = "—"
        if c.startswith("courier"):
            names = ("network", "cache", "revalidated", "stale")
            sources = " / ".join(f"{name} {num(rows.m(c, 'src_' + name) or 0)}" for name in names
                                 if any(r.get("src_" + name) for r in ok)) or "—"
        elif c == "urlsession+cache":
            stored = med([r.get("urlcache_stored") for r in ok])
            disk = med([r.get("urlcache_disk_bytes") for r in ok])
            sources = (f"URLCache holds {num(stored)} of the 1,000 URLs after the run"
                       + (f" ({fmt(disk / 2 ** 20, 1)} MiB on disk by its count)" if disk is not None else "")) if stored is not None else "—"
        files, size = rows.m(c, "store_files"), rows.m(c, "store_bytes")
        store = f"{num(files)} files, {fmt(size / 2 ** 20, 1)} MiB" if files else "none"
        failed, errs = rows.errors(c)
        out.append("| " + " | ".join([
            CACHE_LABELS.get(c, LABELS.get(c, c)), f"**{fmt(v)}**" if c.startswith("courier") else fmt(v),
            ratio(v, base["courier-curl"]), ratio(v, base["urlsession+cache"]), ratio(v, base["ahc"]),
            fmt(rows.m(c, "later_rps")),
            f"{num(rows.m(c, 'server_200'))} / {num(rows.m(c, 'server_304'))}", fresh_later,
            f"{num(reval_200)} / {num(reval_304)}",
            fmt((rows.m(c, "server_bytes_sent") or 0) / 2 ** 20, 2), fmt((later_bytes or 0) / 2 ** 20, 2),
            sources, store, fmt(rss / 1024 if rss else None, 1), fmt(cpu),
            ", ".join(fmt(r.get("rps")) for r in ok), rows.loads(c),
            f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
    return "\n".join(out), rows


def cache_targets(results, workloads, met):
    """Issue 22's targets, from M's rows of this run."""
    out = []
    for wl in CACHE_WORKLOADS:
        if wl not in workloads:
            continue
        r = Rows(results, wl)
        warm = wl in WARM_CACHE_WORKLOADS
        name = "M-warm" if warm else "M"
        flight = "one at a time" if wl.endswith("1") else "8 in flight"
        runs = r.ok("courier-curl+cache")
        if runs:
            # Warm: the store held every fresh entry before the timed run, so no timed request may reach
            # nginx for one; cold: the first pass fills the store, so none may after it.
            key = "fresh" if warm else "fresh_later"
            later = [sum((x.get(f"{key}_statuses") or {}).values()) for x in runs]
            later_bytes = [x.get(f"{key}_bytes_sent") or 0 for x in runs]
            when = "in the timed run (the store held them)" if warm else "after the first pass"
            out.append((f"{name} ({flight}): bytes re-fetched for fresh entries {when} = 0 (Courier, cache on; "
                        f"requests nginx saw for fresh URLs)",
                        ", ".join(map(str, later)) + " requests; " + ", ".join(map(str, later_bytes)) + " bytes (per run)",
                        met(all(x == 0 for x in later) and all(b == 0 for b in later_bytes))))
        on, off = r.m("courier-curl+cache", "rps"), r.m("courier-curl", "rps")
        u, a = r.m("urlsession+cache", "rps"), r.m("ahc", "rps")
        if on and off and warm:
            out.append((f"{name} ({flight}): cache on ≥ 3× the requests/s of cache off (Courier, curl transport)",
                        f"{on / off:.2f}×", met(on / off >= 3.0)))
        elif on and off:
            # Half the URLs say no-cache: 5,500 of the 10,000 requests are round trips whatever the cache does.
            out.append((f"{name} ({flight}) (not a target: every reuse of half the URLs is a round trip, which caps "
                        "a perfect cache near 1.8×): cache on ÷ cache off", f"{on / off:.2f}×", "—"))
        if on and (u or a):
            out.append((f"{name} ({flight}) (not a target): Courier cache on ÷ URLSession with URLCache, ÷ AsyncHTTPClient",
                        f"{on / u:.2f}×, {on / a:.2f}×" if u and a else (f"{on / u:.2f}×, —" if u else f"—, {on / a:.2f}×"), "—"))
    return out


def overhead_table(results):
    out = ["| workload | transport | Courier API req/s | transport directly req/s | API ÷ direct | overhead | added µs/request | per-round API ÷ direct |",
           "|---|---|---|---|---|---|---|---|"]
    summary = {}
    for wl in ("seq", "conc"):
        rows = Rows(results, wl)
        for t in ("curl", "urlsession"):
            api, direct = rows.m(f"courier-{t}", "rps"), rows.m(f"transport-{t}", "rps")
            if api is None or direct is None:
                continue
            per_round = []
            by_round = {}
            for r in rows.ok(f"courier-{t}"):
                by_round.setdefault(r["round"], {})["api"] = r["rps"]
            for r in rows.ok(f"transport-{t}"):
                by_round.setdefault(r["round"], {})["direct"] = r["rps"]
            for rnd in sorted(by_round):
                d = by_round[rnd]
                if "api" in d and "direct" in d:
                    per_round.append(d["api"] / d["direct"])
            overhead = 1 - api / direct
            summary[(wl, t)] = overhead
            out.append(f"| {'A' if wl == 'seq' else 'B'} | {t} | {fmt(api)} | {fmt(direct)} | {api / direct:.2f} | "
                       f"**{overhead * 100:.1f}%** | {1e6 / api - 1e6 / direct:.1f} | "
                       f"{', '.join(f'{x:.2f}' for x in per_round)} |")
    return "\n".join(out), summary


def dedupe_table(results):
    rows = Rows(results, "dedupe")
    base = {b: rows.m(b, "seconds") for b in ("urlsession", "ahc", "curl")}
    head = ["client", "median wall ms", "speed-up ÷ URLSession", "÷ AHC", "÷ curl", "transfers seen by nginx (per run)",
            "MiB nginx sent", "MiB delivered to callers", "Courier statistics", "peak RSS MiB", "load1", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        secs = rows.m(c, "seconds")
        stats = "—"
        if any("dedupe_transfers" in r for r in ok) and c.endswith("+dedupe"):
            stats = ", ".join(f"transfers={int(r['dedupe_transfers'])} joined={int(r['dedupe_joined'])}" for r in ok)
        rss = rows.m(c, "peak_rss_kb")
        failed, errs = rows.errors(c)
        out.append("| " + " | ".join([
            LABELS.get(c, c), fmt(secs * 1000 if secs else None, 1),
            ratio(secs, base["urlsession"], invert=True), ratio(secs, base["ahc"], invert=True),
            ratio(secs, base["curl"], invert=True),
            ", ".join(str(r.get("server_requests")) for r in ok),
            fmt((rows.m(c, "server_bytes_sent") or 0) / 2 ** 20, 1),
            fmt((rows.m(c, "bytes") or 0) / 2 ** 20, 1), stats,
            fmt(rss / 1024 if rss else None, 1), rows.loads(c),
            f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
    return "\n".join(out), rows


def resume_table(results, total):
    rows = Rows(results, "resume")
    head = ["client", "how it resumes", "received before the interruption MiB", "kept for the resume MiB", "2nd request: Range", "status",
            "body MiB re-fetched (median)", "% of file", "received MiB fetched again",
            "÷ URLSession", "÷ AHC", "÷ curl", "2nd request s", "file identical", "errors"]
    base = {b: rows.m(b, "second_body_bytes") for b in ("urlsession", "ahc", "curl")}
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        refetch = rows.m(c, "second_body_bytes")
        # Bytes the client had received before the interruption, yet asked for again.
        again = med([r["second_body_bytes"] - (total - r["received_bytes"])
                     if r.get("second_body_bytes") is not None and r.get("received_bytes") is not None else None for r in ok])
        kept = rows.m(c, "kept_bytes")
        failed, errs = rows.errors(c)
        ranges = sorted({r.get("second_range") if r.get("second_range") not in (None, "", "-") else "none" for r in ok})
        status = sorted({str(r.get("second_status")) for r in ok})
        how = ok[0].get("resume_data", "") if ok else ""
        out.append("| " + " | ".join([
            LABELS.get(c, c), how, fmt((rows.m(c, "received_bytes") or 0) / 2 ** 20, 1),
            fmt(kept / 2 ** 20 if kept is not None else None, 1),
            "<br>".join(ranges) if len(ranges) <= 3 else f"{len(ranges)} different", "/".join(status),
            fmt(refetch / 2 ** 20 if refetch is not None else None, 1),
            fmt(refetch * 100 / total if refetch is not None else None, 1),
            fmt(again / 2 ** 20 if again is not None else None, 2),
            ratio(refetch, base["urlsession"]), ratio(refetch, base["ahc"]), ratio(refetch, base["curl"]),
            fmt(rows.m(c, "seconds"), 2),
            ", ".join("yes" if r.get("identical") else "NO" for r in ok),
            f"{errs}" + (f" ({failed} runs failed)" if failed else "")]) + " |")
    return "\n".join(out), rows


def https_targets(results, workloads, met):
    """Issue 19's targets, from the H, I and J rows of this run."""
    out = []
    names = {"h1seq": "H (A over HTTPS/1.1)", "h1conc": "H (B over HTTPS/1.1)",
             "h2conc32": "I (HTTP/2, 32 in flight)", "h2conc256": "I (HTTP/2, 256 in flight)"}
    for wl in ("h1seq", "h1conc", "h2conc32", "h2conc256"):
        if wl not in workloads:
            continue
        r = Rows(results, wl)
        c, a, k = r.m("courier-curl", "rps"), r.m("ahc", "rps"), r.m("curl", "rps")
        if c and a:
            out.append((f"{names[wl]}: Courier ≥ 1.2× AsyncHTTPClient", f"{c / a:.2f}×", met(c / a >= 1.2)))
        if c and k:
            out.append((f"{names[wl]}: Courier ≥ 1.0× curl CLI", f"{c / k:.2f}×", met(c / k >= 1.0)))
    if "h2conc32" in workloads and "h1conc" in workloads:
        h2, h1 = Rows(results, "h2conc32").m("courier-curl", "rps"), Rows(results, "h1conc").m("courier-curl", "rps")
        if h2 and h1:
            out.append(("I: Courier HTTP/2, 32 in flight ≥ 1.5× Courier HTTP/1.1 over TLS, 32 in flight (H)",
                        f"{h2 / h1:.2f}×", met(h2 / h1 >= 1.5)))
    for wl, ideal in (("h2conc32", 1), ("h2conc256", 2)):
        if wl in workloads:
            runs = [x.get("connections") for x in Rows(results, wl).ok("courier-curl") if x.get("connections") is not None]
            if runs:
                out.append((f"{names[wl]}: Courier's connections per run, counted by nginx (not a target; ideal {ideal})",
                            ", ".join(str(int(x)) for x in runs), "—"))
    if "tlscold" in workloads:
        r = Rows(results, "tlscold")
        ref = r.m("openssl-s_time", "ms_per_handshake")
        cpu = med([x["cold_cpu_ms"] / 32 for x in r.ok("courier-curl") if x.get("cold_cpu_ms") is not None])
        if cpu is not None and ref:
            out.append(("J: Courier's CPU per handshake (32 cold connections) ≤ 2× `openssl s_time`'s ms per handshake",
                        f"{cpu:.2f} ms ÷ {ref:.2f} ms = {cpu / ref:.2f}×", met(cpu / ref <= 2.0)))
        c, k = r.m("courier-curl", "cold_ms"), r.m("curl", "cold_ms")
        if c and k:
            out.append(("J: 32 concurrent cold HTTPS requests within 2× the curl CLI's time",
                        f"{c:.0f} ms ÷ {k:.0f} ms = {c / k:.2f}×", met(c / k <= 2.0)))
    return out


# Issue 43's targets: (key, workload, what, check). The key names the target's paragraph in ISSUE43_MISSES.
ISSUE43_NAMES = {"seq": "A (one at a time)", "conc": "B (32 in flight)", "h1seq": "H (HTTPS/1.1, one at a time)",
                 "h1conc": "H (HTTPS/1.1, 32 in flight)", "h2conc32": "I (HTTP/2, 32 in flight)",
                 "h2conc256": "I (HTTP/2, 256 in flight)"}
HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = os.path.join(HERE, "sections")
ISSUE43_MISSES = os.path.join(SECTIONS, "issue-43-misses.md")


def kept(name):
    """A section kept by hand in Benchmarks/sections/ (numbers from runs of their own, dated inside), or None."""
    path = os.path.join(SECTIONS, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read().strip()


def miss_paragraphs():
    """The hand-written explanations of issue 43's missed targets: `### key` lines, each followed by its text."""
    text = kept("issue-43-misses.md") or ""
    out, key = {}, None
    for line in text.splitlines():
        if line.startswith("### "):
            key = line[4:].strip()
            out[key] = []
        elif key is not None:
            out[key].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items() if "\n".join(v).strip()}


def issue43_targets(results, workloads, met):
    """Issue 43's targets, from A, B, H and I of this run: (key, target, measured, verdict)."""
    out = []
    rows = {wl: Rows(results, wl) for wl in ISSUE43_NAMES if wl in workloads}

    def vs(key, wl, peer, goal):
        if wl not in rows:
            return
        r = rows[wl]
        c, p = r.m("courier-curl", "rps"), r.m(peer, "rps")
        name = "AsyncHTTPClient" if peer == "ahc" else "the curl CLI"
        what = f"{ISSUE43_NAMES[wl]}: Courier ≥ {goal:.1f}× {name}"
        if c and p:
            out.append((key, what, f"{c / p:.2f}×", met(c / p >= goal)))
        else:
            # Said, not left out: a target whose runs failed (or were filtered out by ONLY) is not met by silence.
            lacking = ", ".join(x for x, v in (("Courier", c), (name, p)) if not v)
            out.append((key, what, f"no successful run of {lacking}", "**not measured**"))

    vs("a-ahc", "seq", "ahc", 1.7)
    vs("b-ahc", "conc", "ahc", 1.3)
    vs("b-curl", "conc", "curl", 1.0)
    if "conc" in rows:
        c, k = cpu_per_request(rows["conc"], "courier-curl"), cpu_per_request(rows["conc"], "curl")
        what = f"{ISSUE43_NAMES['conc']}: Courier's CPU per request ≤ the curl CLI's"
        if c and k:
            out.append(("b-cpu", what, f"{c:.1f} µs ÷ {k:.1f} µs = {c / k:.2f}×", met(c <= k)))
        else:
            out.append(("b-cpu", what, "no successful run of " + ", ".join(x for x, v in (("Courier", c), ("the curl CLI", k)) if not v),
                        "**not measured**"))
    vs("h32-ahc", "h1conc", "ahc", 1.2)
    vs("h32-curl", "h1conc", "curl", 1.1)
    vs("h1-curl", "h1seq", "curl", 1.0)
    for wl, tag in (("h2conc32", "i32"), ("h2conc256", "i256")):
        vs(f"{tag}-ahc", wl, "ahc", 1.5)
        vs(f"{tag}-curl", wl, "curl", 1.1)
    for wl, tag, most in (("h2conc32", "i32", 1), ("h2conc256", "i256", 2)):
        if wl in rows:
            runs = [x["connections"] for x in rows[wl].ok("courier-curl") if x.get("connections") is not None]
            ahc = [x["connections"] for x in rows[wl].ok("ahc") if x.get("connections") is not None]
            if runs:
                goal = "1 connection" if most == 1 else f"at most {most} connections"
                out.append((f"{tag}-conns", f"{ISSUE43_NAMES[wl]}: Courier uses {goal} (nginx allows 128 streams on one; "
                            "counted by nginx, every run)", ", ".join(str(int(x)) for x in runs) + " per run"
                            + (f" (AsyncHTTPClient: {', '.join(str(int(x)) for x in ahc)})" if ahc else ""),
                            met(all(x <= most for x in runs))))
    return out


def issue43_section(targets):
    """The targets table of issue 43, each missed row linked to its explanation below it: the paragraph kept in
    Benchmarks/sections/issue-43-misses.md under the target's key, or a placeholder saying it is still to write."""
    paragraphs = miss_paragraphs()
    L = ["## Targets at concurrency (issue 43; ratios from this run)", "",
         "Same-run medians of Courier (curl transport) against AsyncHTTPClient and the curl CLI in A, B, H and I "
         "(their tables below); CPU per request as in those tables (user+system time ÷ every request the process "
         "made, warm-up included). Allocations per request: their own section near the end.", "",
         "| target | measured | |", "|---|---|---|"]
    missed = []
    for key, what, measured, verdict in targets:
        if "missed" in verdict:
            missed.append((key, what))
            verdict += f" ([why](#issue-43-{key}))"
        L.append(f"| {what} | {measured} | {verdict} |")
    L.append("")
    if missed:
        L += ["### Why the missed targets of issue 43 are missed", ""]
        for key, what in missed:
            L.append(f'<a id="issue-43-{key}"></a>**{what}.** ' + paragraphs.get(key, (
                f"**PLACEHOLDER, to be written from a profile (not yet explained):** add a `### {key}` paragraph "
                "to `Benchmarks/sections/issue-43-misses.md` and render again "
                "(`python3 Benchmarks/report.py Benchmarks/results/raw-….jsonl > BENCHMARKS.md`).")))
            L.append("")
    return L


# The measure each workload compares a variant on: (field, what, higher is better).
VARIANT_MEASURE = {"dlmem": ("mbps", "MB/s", True), "dldisk": ("mbps", "MB/s", True),
                   "dedupe": ("seconds", "wall ms", False), "resume": ("seconds", "2nd request s", False),
                   "tlscold": ("cold_ms", "ms to 32 responses", False), "sse": ("rps", "events/s", True),
                   "wsslow": ("peak_rss_kb", "peak RSS MiB", False)}
VARIANT_LETTER = {"seq": "A", "conc": "B", "dlmem": "C1", "dldisk": "C2", "json": "D", "dedupe": "F", "resume": "G",
                  "h1seq": "H (one at a time)", "h1conc": "H (32 in flight)", "h2conc32": "I (32 in flight)",
                  "h2conc256": "I (256 in flight)", "tlscold": "J", "sse": "K", "wssmall": "L-small", "wslarge": "L-large",
                  "wspipe": "L-pipelined", "wsslow": "L-slow", "httpcache": "M (8 in flight)", "httpcache1": "M (one at a time)",
                  "httpcachewarm": "M-warm (8 in flight)", "httpcachewarm1": "M-warm (one at a time)"}


def variant_measure(wl):
    return VARIANT_MEASURE.get(wl, ("rps", "messages/s" if wl in WS_WORKLOADS else "req/s", True))


def cpu_per_unit(r, client, wl):
    """(value, unit) of one run's CPU (user+system, GNU `time`) per unit of work: per request, warm-up included (A,
    B, D, H, I, M), per message (L, warm-up included), per event (K, ns), or per run (ms: C, F, G, J, L-slow)."""
    cpu = (r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0)
    n = r.get("n") or 0
    if kind(wl) in ("seq", "conc", "json"):
        total = n + warmup(client.split("@")[0], wl, n, r.get("c") or 1)
        return (cpu * 1e6 / total if total else None), "µs/req"
    if wl in CACHE_WORKLOADS:
        return (cpu * 1e6 / n if n else None), "µs/req"
    if wl in WS_WORKLOADS and wl != "wsslow":
        total = n + (r.get("warmup") or 0)
        return (cpu * 1e6 / total if total else None), "µs/message"
    if wl == "sse":
        return (cpu * 1e9 / n if n else None), "ns/event"
    return cpu * 1e3, "ms/run"


def variant_table(results, workloads, base_suffix):
    """Courier against another build of it, or against itself with a switch turned, in the same run: for every
    workload and Courier client `mode` that has a `mode@suffix` twin, the median of the measure new ÷ twin (times and
    memory inverted: above 1 is better for the code under test), the rounds' own ratios, and CPU per unit of work.
    base_suffix "base": the @base twins only; None: every other suffix (the speed tricks turned off)."""
    head = ["workload", "Courier client", "variant", "measure", "this code", "variant's", "this ÷ variant (> 1: better)",
            "per round", "CPU this / variant", "CPU this ÷ variant", "load1", "errors (this / variant)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    found = False
    for wl in WORKLOAD_ORDER:
        if wl not in workloads:
            continue
        rows = Rows(results, wl, variants=True)
        key, what, higher = variant_measure(wl)
        scale = (1 / 1024) if key == "peak_rss_kb" else (1e3 if what == "wall ms" else 1)
        for twin in rows.clients:
            if "@" not in twin:
                continue
            mode, suffix = twin.split("@", 1)
            if (suffix == "base") != (base_suffix == "base") or mode not in rows.by:
                continue
            found = True
            a, b = rows.m(mode, key), rows.m(twin, key)
            r = ratio(a, b, invert=not higher)
            by_round = {}
            for x in rows.ok(mode):
                by_round.setdefault(x["round"], {})["a"] = x.get(key)
            for x in rows.ok(twin):
                by_round.setdefault(x["round"], {})["b"] = x.get(key)
            rounds = [ratio(d.get("a"), d.get("b"), invert=not higher) for _, d in sorted(by_round.items())
                      if d.get("a") is not None and d.get("b") is not None]
            ca = [cpu_per_unit(x, mode, wl) for x in rows.ok(mode)]
            cb = [cpu_per_unit(x, twin, wl) for x in rows.ok(twin)]
            unit = (ca or cb or [(None, "")])[0][1]
            cpu_a, cpu_b = med([v for v, _ in ca]), med([v for v, _ in cb])
            la, lb = rows.loads(mode), rows.loads(twin)
            fa, ea = rows.errors(mode)
            fb, eb = rows.errors(twin)
            errs = f"{ea} / {eb}" + (f" ({fa} / {fb} runs failed)" if fa or fb else "")
            shown = lambda v: fmt(v * scale if v is not None else None)
            out.append("| " + " | ".join([
                VARIANT_LETTER.get(wl, wl), LABELS.get(mode, CACHE_LABELS.get(mode, mode)).replace("**", ""),
                f"`@{suffix}`", what, shown(a), shown(b), f"**{r}**" if r != "—" and float(r) < 1 else r,
                ", ".join(rounds) or "—", f"{fmt(cpu_a)} / {fmt(cpu_b)} {unit}", ratio(cpu_a, cpu_b),
                la if la == lb else f"{la}, {lb}", errs]) + " |")
    return "\n".join(out) if found else None


def allocations_section(info):
    """Allocations per request: the counts of this run (allocations.py, run by run.py after the timed workloads)
    with AsyncHTTPClient's, the previous main's and CI's thresholds; then the earlier counts kept by hand."""
    a = info.get("allocations")
    base = (info.get("baseline") or {}).get("commit")
    L = ["## Allocations per request (issue 43): counted exactly, Courier and AsyncHTTPClient", ""]
    if a and not a.get("failed"):
        res = {(r["workload"], r["client"]): r for r in a["results"]}
        clients = a.get("clients", [])
        L.append(f"Counted in this run by `python3 Benchmarks/allocations.py` ({a.get('seconds', 0):.0f} s, after the "
                 "timed workloads, against a private nginx of its own on two free loopback ports: plain HTTP/1.1, and "
                 "HTTPS with HTTP/2 by ALPN). Each client runs in a process of its own under `LD_PRELOAD` of ordo-one's "
                 f"malloc-interposer (the counter behind package-benchmark's malloc metrics): 200 warm-up requests, then "
                 f"{a['n']:,} counted ones; every `malloc`, `calloc`, `realloc` and `posix_memalign` call of the process, "
                 "on every thread, counts, libcurl's and the TLS library's included; the server is another process. "
                 f"Each client runs {a['runs']} times per workload and the fewest count (a request that has to wait on a "
                 "busy machine suspends, and the suspension allocates: it only ever adds). Courier: "
                 "`session.request(url).validate().serializingData().value` on the curl transport; AsyncHTTPClient: "
                 "`execute` + `body.collect(upTo:)`; 32 in flight means 32 tasks each looping. A count does not move "
                 "with the machine's load the way a time does, so CI gates Courier's (`.ci/run`, "
                 "`allocations.py --courier-only --check Benchmarks/allocation-thresholds.json`)."
                 + (" **QUICK=1: fewer counted requests.**" if info.get("quick") else ""))
        L.append("")
        thresholds = a.get("thresholds") or {}
        head = ["workload", "Courier: mallocs / request", "AsyncHTTPClient", "Courier ÷ AHC",
                "bytes allocated / request: Courier / AHC"]
        if "courier@base" in clients:
            head += [f"Courier at `{base or '?'}` (previous main)", "this ÷ previous"]
        if thresholds:
            head += ["CI threshold", "count ≤ threshold"]
        head.append("Courier's runs")
        L += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for w in a["workloads"]:
            wid = w["id"]
            c, h, b = res.get((wid, "courier")), res.get((wid, "ahc")), res.get((wid, "courier@base"))
            cm = c["mallocs_per_request"] if c else None
            hm = h["mallocs_per_request"] if h else None
            cells = [f"{wid}: {w['description']}", fmt(cm, 1), fmt(hm, 1), ratio(cm, hm),
                     f"{num(c and c.get('bytes_per_request'))} / {num(h and h.get('bytes_per_request'))}"]
            if "courier@base" in clients:
                bm = b["mallocs_per_request"] if b else None
                cells += [fmt(bm, 1), ratio(cm, bm)]
            if thresholds:
                limit = thresholds.get(wid)
                cells += [fmt(limit, 1), ("**within**" if cm <= limit else "**above**") if cm is not None and limit else "—"]
            cells.append(", ".join(f"{x:.1f}" for x in (c or {}).get("runs", [])) or "—")
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
    elif a:
        L += [f"**allocations.py failed in this run** (exit {a.get('rc', '?')}): `{(a.get('stderr') or '').strip()[-400:]}`", ""]
    else:
        L += ["Not counted in this run (run.py counts them in a default run; `ALLOCATIONS=1` with `WORKLOADS` set).", ""]
    history = kept("allocations-history.md")
    if history:
        L += [history, ""]
    return L


def h3_title(wl, params):
    p = params.get(wl, {"n": 2000 if wl == "h3seq" else 8000, "c": 1 if wl == "h3seq" else 32})
    how = "one at a time" if p["c"] == 1 else f"{p['c']} in flight"
    return f"N. HTTP/3, HTTP/2, HTTP/1.1 against hypercorn: {p['n']:,} GETs of a 100-byte JSON, {how}"


def h3_table(results, wl):
    """Workload N: one row per client and HTTP version; ÷ the same client over HTTP/2, and ÷ pycurl (the C API on
    the same libcurl) over the same version."""
    rows = Rows(results, wl)
    seq = kind(wl) == "seq"
    head = ["client", "HTTP", "median req/s", "÷ same client, HTTP/2", "÷ pycurl, same HTTP"]
    if seq:
        head += ["p50 µs", "p99 µs"]
    head += ["peak RSS MiB", "CPU µs/req", "server CPU µs/req", "connections (server log, per run)",
             "protocol (client; server log)", "runs", "load1", "errors"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cid, label, http in H3_ROWS:
        if cid not in rows.by:
            continue
        ok = rows.ok(cid)
        v = rows.m(cid, "rps")
        same_client_h2 = rows.m(cid.rsplit("-", 1)[0] + "-h2", "rps")
        peer = rows.m("pycurl-h" + http[0], "rps")
        cells = [label, http, f"**{fmt(v)}**" if cid.startswith("courier") else fmt(v),
                 "—" if http == "2" else ratio(v, same_client_h2), "—" if cid.startswith("pycurl") else ratio(v, peer)]
        if seq:
            cells += [fmt(rows.m(cid, "p50_us")), fmt(rows.m(cid, "p99_us"))]
        rss = rows.m(cid, "peak_rss_kb")
        cells.append(fmt(rss / 1024 if rss else None, 1))
        per = []
        for r in ok:
            n = r.get("n") or 0
            total = n + warmup(cid, wl, n, r.get("c") or 1)
            per.append(((r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0)) * 1e6 / total if total else None)
        cells.append(fmt(med(per)))
        srv = med([r["server_cpu_ms"] * 1e3 / r["server_requests"] for r in ok
                   if r.get("server_cpu_ms") is not None and r.get("server_requests")])
        cells.append(fmt(srv))
        cells.append(counts(ok, "connections"))
        client_seen = sorted({r.get("protocol") for r in ok if r.get("protocol")})
        server_seen = sorted({p for r in ok for p in (r.get("server_protocols") or {})})
        cells.append(", ".join(client_seen or ["—"]) + "; " + ", ".join("HTTP/" + p for p in server_seen or ["?"]))
        cells.append(", ".join(fmt(r.get("rps")) for r in ok))
        cells.append(rows.loads(cid))
        failed, errs = rows.errors(cid)
        bad = sum(n for r in ok for status, n in (r.get("server_statuses") or {}).items() if status != "200")
        cells.append(f"{errs}" + (f" ({failed} runs failed)" if failed else "") + (f"; {bad} non-200 in the server log" if bad else ""))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out), rows


H3_WHAT = ("One server for every row: `.ci/h3-server.py`, hypercorn {server} in one **Python** process (WSGI, the "
           "file read per request, an access-log line per request), HTTP/3 over QUIC on a UDP port and HTTP/1.1 and "
           "HTTP/2 (TLS, ALPN) on the TCP port of the same number, with the benchmark's CA and certificate; "
           "`keep_alive_max_requests` raised so that it never closes a connection during a run. It serves a few "
           "hundred requests a second and is the bottleneck of most rows: its CPU per request (from `/proc`, "
           "connection and warm-up included) is in the table. Ratios between protocols therefore say how each client "
           "stack fares against this server, not what HTTP/3 costs against a fast one. Courier (curl transport, "
           "`httpVersion` `.http3`, `.http2` or `.http1_1`, `trustRoots = .system(adding: [CA])`) runs on {libcurl} "
           "through `COURIER_LIBCURL`; the C peer on the very same library is pycurl {pycurl} driving libcurl's C "
           "API from `Benchmarks/bench-pycurl.py`: the same loops (one easy handle reused for the sequential "
           "workload; a multi handle with 32 easy handles re-added as they finish, `CURLOPT_PIPEWAIT` over HTTP/2 "
           "and HTTP/3, `CURL_HTTP_VERSION_3ONLY` for HTTP/3), and the same untimed warm-up. AsyncHTTPClient has no "
           "HTTP/3: its HTTP/2 and HTTP/1.1 rows. \"Protocol\" is what each client's responses reported (Courier: "
           "`TransferMetrics.httpVersion`) and what hypercorn logged; connections are the distinct client ports in "
           "hypercorn's log (a QUIC connection keeps its UDP port). CPU µs/request: the client process's user+system "
           "time (GNU `time`) ÷ every request it made, warm-up included (pycurl's includes starting Python).")


def h3_section(info, results, workloads):
    """Workload N's section of BENCHMARKS.md (also printed alone by `report.py --h3 raw.jsonl`)."""
    libcurl = info.get("h3_libcurl") or {}
    pycurl_line = libcurl.get("pycurl", "")
    version = pycurl_line.split("libcurl/")[1].split()[0] if "libcurl/" in pycurl_line else "?"
    L = ["## HTTP/3 (workload N; issue 41)", ""]
    la, le = info.get("load_at_start", (0, 0, 0)), info.get("load_at_end", (0, 0, 0))
    if any(wl not in H3_WORKLOADS for wl in workloads):
        # Part of a longer run (the default list): its machine, start and load are the report's.
        took = sum((info.get("workload_seconds") or {}).get(wl, 0) for wl in H3_WORKLOADS)
        L.append(f"Part of the run above ({took / 60:.1f} minutes of it). **Quote the ratios, not the absolute numbers.**")
    else:
        L.append(f"Run started {info.get('started', '?')}: `WORKLOADS=N ROUNDS={info.get('rounds', '?')}`, "
                 f"{info.get('runtime_s', 0) / 60:.1f} minutes; load average {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} "
                 f"(1/5/15 min) at the start, {le[0]:.2f} / {le[1]:.2f} / {le[2]:.2f} at the end, on the same 2-core VM "
                 f"(Courier {info.get('library', '?')}). **Quote the ratios, not the absolute numbers.**"
                 + (" **QUICK=1: a tenth of the requests.**" if info.get("quick") else ""))
    L.append("")
    L.append(H3_WHAT.format(server=info.get("h3_server", "?").replace("hypercorn ", "").replace(" aioquic ", " with aioquic "),
                            libcurl=f"libcurl {version} (`{os.path.basename(libcurl.get('file', '?'))}` from pycurl 7.49.0's "
                            "manylinux wheel, with nghttp2, ngtcp2/nghttp3 and its own OpenSSL)",
                            pycurl=f"(`{pycurl_line}`)" if pycurl_line else ""))
    L.append("")
    workload_tables(L, workloads, H3_WORKLOADS, lambda wl: h3_title(wl, info.get("params", {})),
                    lambda wl: h3_table(results, wl)[0])
    return L


def workload_tables(L, workloads, group, title, table):
    """Appends a `### title` and its table for each workload of `group` that ran, in the group's order."""
    for wl in group:
        if wl in workloads:
            L.extend([f"### {title(wl)}", "", table(wl), ""])


def render(info, results, workloads):
    total_resume = 64 << 20
    TITLES = titles(info["params"])
    L = []
    L.append("# Courier benchmarks")
    L.append("")
    L.append("Generated by `python3 Benchmarks/run.py` (see `Benchmarks/README.md`); every number below comes "
             f"from one run of that command, started {info['started']}, {info['rounds']} rounds per workload, "
             f"which took {info['runtime_s'] / 60:.1f} minutes (release build included: {info['build_s']:.0f} s). "
             f"Raw results: `{info['raw']}` (not committed). The sections marked \"kept by hand\" are the exception: "
             "they come from runs of their own, dated in each, and are copied in from `Benchmarks/sections/`.")
    for letter, why in sorted((info.get("skipped") or {}).items()):
        L.append("")
        L.append(f"Workload {letter} did not run: {why}.")
    if info.get("quick"):
        L.append("")
        L.append("**QUICK=1 run: A, B, D, H, I, L and N made a tenth of their usual requests (L: messages), M two passes, the allocation counts 500 requests; a smoke test, not a measurement.**")
    L.append("")
    L.append("## How to read this")
    L.append("")
    L.append("- **Use the ratios, not the absolute numbers.** Every ratio compares two figures from the same run, "
             "with the client order rotated every round (and reversed every other round); each figure is the "
             "median over the rounds. The machine is a shared 2-core VM: other engineers' compiles run on the "
             "same cores, so absolute req/s and MB/s move by 20–30% between runs, and the load column says how busy "
             "the machine was when each client's runs started.")
    L.append("- \"÷ X\" is client ÷ X for throughput (above 1 means faster than X); for F it is X's wall time ÷ the "
             "client's (above 1 means faster); for G it is bytes re-fetched ÷ X's (below 1 means fewer).")
    L.append("- A to G are plain HTTP/1.1 on loopback against nginx (1 worker, keep-alive, `access_log off` except "
             "on F's and G's locations, sendfile, gzip off); H, I and J are HTTPS on the same nginx (see their sections). All clients: connections per host = concurrency (at "
             "least 8 for Courier and AsyncHTTPClient, 6 for URLSession), no cache, no cookies (Courier "
             "`cookies = .none`; URLSession cookie handling off, as Courier's URLSession transport also does; "
             "AsyncHTTPClient and curl have none), no decompression.")
    L.append("- Peak RSS and CPU time come from GNU `time -v` around each client process; CPU µs/request divides "
             "user+system time by every request made, warm-up included.")
    L.append("- Courier's targets (issue 9) are judged on Courier's default Linux transport, curl; the URLSession "
             "transport rows show what the same API costs on Foundation's URLSession, which on Linux is capped by "
             "FoundationNetworking's single serial queue (see `../shared/research/perf-baseline.md`).")
    L.append("")
    L.append("## Machine")
    L.append("")
    la = info["load_at_start"]
    le = info.get("load_at_end", (0, 0, 0))
    L.append(f"- CPU: {info['cpu']}, {info['cores']} cores (KVM guest, shared with other work), {info['mem_gib']} GiB RAM")
    L.append(f"- Load average at start: {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} (1/5/15 min); at the end: "
             f"{le[0]:.2f} / {le[1]:.2f} / {le[2]:.2f}; the 1-minute load before each run is in the tables")
    L.append(f"- Kernel: Linux {info['kernel']}; {info['os']}")
    L.append(f"- Swift: {info['swift']}")
    L.append(f"- libcurl: {info['libcurl']} (the system `libcurl.so.4` that FoundationNetworking and Courier's curl transport load; "
             f"{info['curl']} CLI on the same library)")
    L.append(f"- Server: nginx {info['nginx']}; load tool: {info['wrk']}")
    L.append(f"- Courier: commit {info.get('library', '?')} (the library as built for this run)")
    L.append(f"- AsyncHTTPClient {info['ahc']} on swift-nio {info['nio']}; all Swift clients built with `swift build -c release`")
    if any(wl in TLS_WORKLOADS for wl in workloads):
        L.append(f"- TLS: {info.get('openssl', '?')} (nginx, curl and libcurl); swift-nio-ssl {info.get('nio_ssl', '?')} "
                 "(BoringSSL) for AsyncHTTPClient; a private CA and an RSA-2048 certificate for 127.0.0.1 made by openssl "
                 "at start-up; nginx `ssl_protocols TLSv1.2 TLSv1.3`, `ssl_session_cache shared`, `keepalive_requests 1000000`, "
                 "`http2_max_concurrent_streams 128`")
    L.append("")

    targets = []
    tables = {}
    for wl in ("seq", "conc", "dlmem", "dldisk", "json"):
        if wl in workloads:
            tables[wl] = throughput_table(results, wl)
    overhead = ({}, None)
    if "seq" in workloads or "conc" in workloads:
        overhead = overhead_table(results)

    # Targets
    def met(ok):
        return "**met**" if ok else "**missed**"

    if "seq" in tables:
        r = tables["seq"][1]
        c, a = r.m("courier-curl", "rps"), r.m("ahc", "rps")
        if c and a:
            targets.append(("A: small GETs one at a time ≥ 1.5× AsyncHTTPClient", f"{c / a:.2f}×", met(c / a >= 1.5)))
    if "conc" in tables:
        r = tables["conc"][1]
        c, a = r.m("courier-curl", "rps"), r.m("ahc", "rps")
        if c and a:
            targets.append(("B: 32 in flight ≥ 1.0× AsyncHTTPClient", f"{c / a:.2f}×", met(c / a >= 1.0)))
    if "dldisk" in tables:
        r = tables["dldisk"][1]
        c, k, rss = r.m("courier-curl", "mbps"), r.m("curl", "mbps"), r.m("courier-curl", "peak_rss_kb")
        if c and k:
            targets.append(("C: 1 GiB to disk ≥ 0.9× curl", f"{c / k:.2f}×", met(c / k >= 0.9)))
        if rss:
            targets.append(("C: … with peak RSS ≤ 64 MiB", f"{rss / 1024:.1f} MiB", met(rss / 1024 <= 64)))
    for (wl, t), o in sorted(overhead[1].items()) if overhead[1] else []:
        if t == "curl":
            targets.append((f"E: API overhead over the curl transport ≤ 10% ({'A' if wl == 'seq' else 'B'})",
                            f"{o * 100:.1f}%", met(o <= 0.10)))
    for (wl, t), o in sorted(overhead[1].items()) if overhead[1] else []:
        if t == "urlsession":
            targets.append((f"E (not a target, for reference): overhead over the URLSession transport ({'A' if wl == 'seq' else 'B'})",
                            f"{o * 100:.1f}%", "—"))
    if "dedupe" in workloads:
        d, _ = dedupe_table(results)
        r = Rows(results, "dedupe")
        for t in ("curl", "urlsession"):
            runs = [x.get("server_requests") for x in r.ok(f"courier-{t}+dedupe")]
            if runs:
                targets.append((f"F: exactly 1 transfer with dedupe ({t} transport)", ", ".join(map(str, runs)) + " per run",
                                met(all(x == 1 for x in runs))))
    tls_targets = https_targets(results, workloads, met)
    event_targets = sse_targets(results, met) if "sse" in workloads else []
    ws_goals = ws_targets(results, workloads, met)
    cache_goals = cache_targets(results, workloads, met)
    goals43 = issue43_targets(results, workloads, met)
    if targets:
        L.append("## Targets (issue 9; ratios from this run)")
        L.append("")
        L.append("| target | measured | |")
        L.append("|---|---|---|")
        for t in targets:
            L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
        L.append("")
    if tls_targets:
        L.append("## Targets for HTTPS and HTTP/2 (issue 19; ratios from this run)")
        L.append("")
        L.append("| target | measured | |")
        L.append("|---|---|---|")
        for t in tls_targets:
            L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
        L.append("")
    if event_targets:
        L.append("## Targets for event streams (issue 20; ratios from this run)")
        L.append("")
        L.append("| target | measured | |")
        L.append("|---|---|---|")
        for t in event_targets:
            L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
        L.append("")
    if ws_goals:
        L.append("## Targets for WebSockets (issue 21; ratios from this run)")
        L.append("")
        L.append("| target | measured | |")
        L.append("|---|---|---|")
        for t in ws_goals:
            L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
        L.append("")
    if cache_goals:
        L.append("## Targets for the HTTP cache (issue 22; ratios from this run)")
        L.append("")
        L.append("| target | measured | |")
        L.append("|---|---|---|")
        for t in cache_goals:
            L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
        L.append("")
    if goals43:
        L += issue43_section(goals43)
    if any("missed" in t[2] for t in targets + tls_targets + event_targets + ws_goals + cache_goals):
        L.append("Where the time goes for the missed targets (perf profiles, with the fixes suggested for the "
                 "library and what they gained in a scratch experiment): `Benchmarks/PROFILES.md`.")
        L.append("")

    against_base = variant_table(results, workloads, "base")
    if against_base:
        base = info.get("baseline") or {}
        L += ["## Courier against the previous main (same run)", "",
              f"`BASELINE_BIN` ran the previous main's `bench-courier` (commit `{base.get('commit', '?')}`, "
              f"from `{base.get('bin', '?')}`) as the client `<mode>@base` beside this code's, in every workload where a "
              "Courier client runs (A–M), with the same arguments, rounds interleaved. \"This ÷ variant\" is the ratio of "
              "the medians (throughput; for times and memory the previous main's ÷ this code's), so above 1 means this "
              "code is faster (or smaller); \"per round\" gives each round's own ratio, which shows the noise. CPU per "
              "unit of work is each process's user+system time (GNU `time`). The previous main's rows appear only here.",
              "", against_base, ""]
        remeasured = kept("previous-main-remeasured.md")
        if remeasured:
            L += [remeasured, "", "*Kept by hand, in `Benchmarks/sections/previous-main-remeasured.md`, from the runs it "
                  "names (not this report's run).*", ""]
    tricks_off = variant_table(results, workloads, None)
    if tricks_off:
        L += ["## Courier with its speed tricks off (same run)", "",
              "Courier with `COURIER_FAST_PATHS=0` (`@nofast`) or one trick off (`@no-<name>`, "
              "`COURIER_FAST_PATHS=-<name>`; run.py's `FAST_PATHS_AB` and `FAST_PATHS_VARIANTS`), against the same "
              "build with every trick on, as in the table above (above 1: the tricks make it faster).",
              "", tricks_off, ""]

    for wl in ("seq", "conc", "dlmem", "dldisk", "json"):
        if wl in tables:
            L.append(f"## {TITLES[wl]}")
            L.append("")
            L.append(WHAT[wl])
            L.append("")
            L.append(tables[wl][0])
            L.append("")
            if wl == "conc" and overhead[0]:
                pass
    if overhead[1]:
        L.append("## E. Courier's API overhead: the API vs its own transport driven directly")
        L.append("")
        L.append("Same process type, same transport, same workload (the A and B rows above): \"transport directly\" "
                 "starts a `TransportRequest` through `@_spi(Transport)`, appends the body chunks to a `Data`, "
                 "acknowledges them and resumes a continuation on `completed`. The API rows go through "
                 "`Session.request(url).serializingData().value`: request object, adapters, validation, redirect "
                 "and retry handling, event monitors, serializer. Overhead = 1 − API ÷ direct (target ≤ 10%).")
        L.append("")
        L.append(overhead[0])
        L.append("")
    if "dedupe" in workloads:
        L.append(f"## {TITLES['dedupe']}")
        L.append("")
        L.append("Each client starts 100 GETs of the same URL at once. To make \"at once\" deterministic, nginx's "
                 "worker is held (SIGSTOP) while a client issues them and released (SIGCONT) once they are all "
                 "issued — for Courier with dedupe, once every request has reached the deduplicator "
                 "(`statistics.transfers + joined == 100`); the same gate for every client. Wall time runs from the "
                 "first request issued to the last body received, and includes the gate. Transfers and bytes are "
                 "counted by nginx (`$bytes_sent` in an access log on that location). Up to 32 connections; curl "
                 "uses `-Z --parallel-max 32` over 100 URLs differing only in a query string, is not gated, and its "
                 "time is process wall clock.")
        L.append("")
        L.append(dedupe_table(results)[0])
        L.append("")
    for group, wls, intro in (
            ("H", ("h1seq", "h1conc"), None),
            ("I", ("h2conc32", "h2conc256"), None)):
        present = [wl for wl in wls if wl in workloads]
        for wl in present:
            L.append(f"## {TITLES[wl]}")
            L.append("")
            L.append(WHAT[wl] if wl in WHAT else WHAT["h2conc32"])
            L.append("")
            L.append(throughput_table(results, wl)[0])
            L.append("")
        if present:
            L.append(f"## {group}. Cold phase: a new client's first connections")
            L.append("")
            L.append("Measured inside the runs above, before their warm-up: the Swift clients time from just before "
                     "the client (`Session`, `HTTPClient`) is made to the last response of a first wave of requests "
                     "started at once, one per worker (1 for the sequential workload; 32 or 256 otherwise, over "
                     "HTTP/1.1 one new connection each). CPU is the process's `getrusage` time over the same span, "
                     "every thread. curl: the slowest `time_total` among its first wave of transfers (URLs `i=1` to "
                     "`i=c` of its glob, from `%{url_effective}`), which all start together; its process start is "
                     "left out as the Swift clients' is.")
            L.append("")
            L.append(cold_table(results, present))
            L.append("")
    if "tlscold" in workloads:
        L.append(f"## {TITLES['tlscold']}")
        L.append("")
        L.append("A new process per run, a new client in it, 32 GETs at once over HTTPS/HTTP/1.1 (nginx's `ssl`-only "
                 "server), so 32 full TLS handshakes; time from before the client is made to the 32nd response. "
                 "Courier trusts `.system(adding: [CA])` (the system store, ~140 certificates, plus the CA), "
                 "AsyncHTTPClient only the CA (`trustRoots = .certificates`), curl `--cacert CA` (only the CA). "
                 "CPU ms per handshake: the process's CPU over that span ÷ 32 (`getrusage` in the process; judged), "
                 "and its whole CPU time (its rusage as run.py reaps it, process start and exit included) ÷ 32; "
                 "Courier's rows also give, from its `TransferMetrics`, when the 32 transfers started and how long "
                 "their handshakes took (libcurl's connect → appconnect, CA loading included). "
                 "\"Resumed sessions\": connections on which nginx saw a TLS session resumed (`$ssl_session_reused`): "
                 "they started their handshake after an earlier connection of the same client had received a ticket. The reference is `openssl s_time -connect … "
                 f"-new -time {5}` against the same server: full handshakes one after the other, its wall time ÷ "
                 "handshakes (client and server work on one connection); its own CPU per handshake is in the "
                 "\"whole process\" column. curl: `-Z --parallel-immediate --parallel-max 32 --http1.1` over 32 "
                 "URLs; its time is the slowest transfer's `time_total`.")
        L.append("")
        L.append(tlscold_table(results)[0])
        L.append("")
    if "resume" in workloads:
        L.append(f"## {TITLES['resume']}")
        L.append("")
        L.append("A 64 MiB file on a location throttled by nginx (`limit_rate 32m`, ~2 s per download), so that the "
                 "interruption lands at 50% deterministically. Courier: a `resumable: true` download on a session whose "
                 "`DownloadStore` lives in a scratch directory, cancelled once the store's `.part` file passes 32 MiB; "
                 "then a **new** `Session` on the same store directory downloads the URL again. URLSession: a download "
                 "task cancelled with `cancel(byProducingResumeData:)` at 50%, then `downloadTask(withResumeData:)` if "
                 "resume data exists (it never does on Linux) or a fresh task. AsyncHTTPClient has no resume: its body "
                 "stream is abandoned at 50% and the file requested again. curl: the process is killed (SIGKILL) "
                 "once its output passes 50%, then `curl -C -` continues it. nginx's log gives the bytes the second "
                 "request sent; \"received MiB fetched again\" = those bytes − (file − bytes the client had "
                 "received when it was interrupted): 0 is a perfect resume. The final file is compared with the source (`cmp`).")
        L.append("")
        L.append(resume_table(results, total_resume)[0])
        L.append("")
    if "sse" in workloads:
        L.append(f"## {TITLES['sse']}")
        L.append("")
        L.append("nginx serves one static file (`location ~ \\.sse$ { default_type text/event-stream; }`, sendfile) "
                 "holding events `id: N` / `data: {\"sequence\":N,\"text\":\"…\"}` (100 bytes of data) / blank "
                 "line, N from 1; each client reads it over one plain HTTP/1.1 connection and must count exactly "
                 "every event (an error otherwise). Courier: `session.eventStream(url, reconnection: .never)` read "
                 "through `events()`, and through `decodingEvents(of: Tick.self)` (JSONDecoder per event, the "
                 "sequence numbers checked). AsyncHTTPClient: `response.body` chunk by chunk into "
                 "`EventSource.Parser` (mattt/EventSource, an actor taking one byte per call), one actor hop per "
                 "chunk, the events drained inside the actor at each line end; it counts events and decodes "
                 "nothing. curl: `curl -N -s -o /dev/null`, raw bytes, no parsing: its events/s is the file's "
                 "events ÷ its `time_total`, the ceiling. The Swift clients time from just before the request "
                 "to the last event (no warm-up; the client or session is made before); CPU time is the whole "
                 "process's (GNU `time`), ÷ the events for CPU ns/event.")
        L.append("")
        L.append(sse_table(results, info["params"])[0])
        L.append("")
    if any(wl in workloads for wl in WS_WORKLOADS):
        L.append("## L. WebSockets")
        L.append("")
        L.append(WS_WHAT)
        L.append("")
        workload_tables(L, workloads, WS_WORKLOADS, TITLES.get, lambda wl: ws_table(results, wl)[0])
    if any(wl in workloads for wl in CACHE_WORKLOADS):
        L.append("## M. HTTP cache")
        L.append("")
        L.append(CACHE_WHAT)
        L.append("")
        workload_tables(L, workloads, CACHE_WORKLOADS, TITLES.get, lambda wl: cache_table(results, wl)[0])
    if any(wl in workloads for wl in H3_WORKLOADS):
        L += h3_section(info, results, workloads)
    elif kept("h3.md"):
        why = (info.get("skipped") or {}).get("N")
        L += [kept("h3.md"), "", "*Kept by hand, in `Benchmarks/sections/h3.md`, from the run it describes: workload N "
              "did not run in this report's run" + (f" ({why})" if why else "") + ".*", ""]
    L += allocations_section(info)
    for name in ("integrations.md", "openapi.md"):
        text = kept(name)
        if text:
            L += [text, "", f"*Kept by hand, in `Benchmarks/sections/{name}`.*", ""]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    info, results = None, []
    h3_only = sys.argv[1] == "--h3"
    for line in open(sys.argv[-1]):
        obj = json.loads(line)
        if "machine" in obj:
            info = obj["machine"]
        elif "summary" in obj:
            info = obj["summary"]
        else:
            results.append(obj)
    workloads = sorted({r["workload"] for r in results}, key=WORKLOAD_ORDER.index)
    sys.stdout.write("\n".join(h3_section(info, results, workloads)) + "\n" if h3_only else render(info, results, workloads))
