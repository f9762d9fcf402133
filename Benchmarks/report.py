"""Turns run.py's results into BENCHMARKS.md (also usable alone: python3 report.py results/raw-....jsonl)."""
import json
import statistics
import sys

ORDER = ["wrk", "curl", "urlsession", "ahc", "courier-curl", "courier-urlsession", "transport-curl",
         "transport-urlsession", "courier-curl+dedupe", "courier-urlsession+dedupe"]
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
}
def titles(params):
    n = lambda wl: f"{params[wl]['n']:,}"
    return {
        "seq": f"A. {n('seq')} GETs of a 100-byte JSON, one at a time",
        "conc": f"B. {n('conc')} GETs of a 100-byte JSON, {params['conc']['c']} in flight",
        "dlmem": "C1. 1 GiB download into memory",
        "dldisk": "C2. 1 GiB download to a file on disk",
        "json": f"D. {n('json')} GETs of a 64 KiB JSON decoded into a Decodable, {params['json']['c']} in flight",
        "dedupe": f"F. Dedupe: {n('dedupe')} identical concurrent GETs of a 1 MiB body",
        "resume": "G. Resume: a 64 MiB download interrupted at 50%, finished by a new session",
    }


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
    "json": "Requests per second; each 65,536-byte body is decoded with Foundation's JSONDecoder into "
            "`Catalog { items: [Item] (852), pad }` (Courier: `serializingDecodable(Catalog.self)`; the others "
            "decode in the worker task). curl only downloads (no decoding), so its ratio is an upper bound. "
            "JSONDecoder dominates this workload (see perf-baseline.md: ~5.7 ms of CPU per body).",
}


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
    if client in ("wrk", "curl"):
        return 0
    if wl in ("seq", "conc", "json"):
        return max(c, min(100, n // 50))
    return 0


class Rows:
    def __init__(self, results, wl):
        self.wl = wl
        self.by = {}
        for r in results:
            if r.get("workload") == wl:
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


def throughput_table(results, wl):
    rows = Rows(results, wl)
    key = "rps" if wl in ("seq", "conc", "json") else "mbps"
    unit = "req/s" if key == "rps" else "MB/s"
    base = {b: rows.m(b, key) for b in ("urlsession", "ahc", "curl")}
    head = ["client", f"median {unit}", "÷ URLSession", "÷ AHC", "÷ curl"]
    if wl == "seq":
        head += ["p50 µs", "p99 µs"]
    head += ["peak RSS MiB", "CPU µs/req" if key == "rps" else "CPU s", "runs", "load1", "errors"]
    if wl == "seq":
        head.insert(-3, "vol. switches/req")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows.clients:
        ok = rows.ok(c)
        v = rows.m(c, key)
        cells = [LABELS.get(c, c), f"**{fmt(v)}**" if c.startswith("courier") else fmt(v),
                 ratio(v, base["urlsession"]), ratio(v, base["ahc"]), ratio(v, base["curl"])]
        if wl == "seq":
            cells += [fmt(rows.m(c, "p50_us")), fmt(rows.m(c, "p99_us"))]
        rss = rows.m(c, "peak_rss_kb")
        cells.append(fmt(rss / 1024 if rss else None, 1))
        cpu = [((r.get("cpu_user") or 0) + (r.get("cpu_sys") or 0)) for r in ok]
        if key == "rps":
            per = []
            for r, t in zip(ok, cpu):
                n = r.get("n") or 0
                total = n + warmup(c, wl, n, r.get("c") or 1)
                per.append(t * 1e6 / total if total else None)
            cells.append(fmt(med(per)) if c != "wrk" else "—")
        else:
            cells.append(fmt(med(cpu), 2))
        if wl == "seq":
            sw = [r.get("vol_cs") / ((r.get("n") or 1) + warmup(c, wl, r.get("n") or 0, 1)) for r in ok if r.get("vol_cs") is not None]
            cells.append(fmt(med(sw), 1) if c != "wrk" else "—")
        cells.append(", ".join(fmt(r.get(key)) for r in ok))
        cells.append(rows.loads(c))
        failed, errs = rows.errors(c)
        cells.append(f"{errs}" + (f" ({failed} runs failed)" if failed else ""))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out), rows


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


def render(info, results, workloads):
    total_resume = 64 << 20
    TITLES = titles(info["params"])
    L = []
    L.append("# Courier benchmarks")
    L.append("")
    L.append("Generated by `python3 Benchmarks/run.py` (see `Benchmarks/README.md`); every number below comes "
             f"from one run of that command, started {info['started']}, {info['rounds']} rounds per workload, "
             f"which took {info['runtime_s'] / 60:.1f} minutes (release build included: {info['build_s']:.0f} s). "
             f"Raw results: `{info['raw']}` (not committed).")
    if info.get("quick"):
        L.append("")
        L.append("**QUICK=1 run: A, B and D made a tenth of their usual requests; a smoke test, not a measurement.**")
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
    L.append("- Everything is plain HTTP/1.1 on loopback against nginx (1 worker, keep-alive, `access_log off` except "
             "on F's and G's locations, sendfile, gzip off). All clients: connections per host = concurrency (at "
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
    if targets:
        L.append("## Targets (issue 9; ratios from this run)")
        L.append("")
        L.append("| target | measured | |")
        L.append("|---|---|---|")
        for t in targets:
            L.append(f"| {t[0]} | {t[1]} | {t[2]} |")
        L.append("")
        if any("missed" in t[2] for t in targets):
            L.append("Where the time goes for the missed targets (perf profiles, with the fixes suggested for the "
                     "library and what they gained in a scratch experiment): `Benchmarks/PROFILES.md`.")
            L.append("")

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
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    info, results = None, []
    for line in open(sys.argv[1]):
        obj = json.loads(line)
        if "machine" in obj:
            info = obj["machine"]
        elif "summary" in obj:
            info = obj["summary"]
        else:
            results.append(obj)
    workloads = sorted({r["workload"] for r in results}, key=["seq", "conc", "dlmem", "dldisk", "json", "dedupe", "resume"].index)
    sys.stdout.write(render(info, results, workloads))
