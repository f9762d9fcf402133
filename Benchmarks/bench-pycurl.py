#!/usr/bin/env python3
"""Workload N's C peer: libcurl driven by pycurl, the same loops as bench-courier's seq and conc, so that
Courier and plain libcurl run on the same library file (pycurl's manylinux wheel: libcurl 8.23 with
nghttp2 and ngtcp2/nghttp3). Started by run.py; the command line is the Swift clients' (a subset):

  bench-pycurl.py h3seq|h3conc32 --client pycurl --url URL --n N --c C --cacert PEM --http 3|2|1.1

seq (c = 1): one easy handle, one request at a time, its connection reused. conc: a multi handle with c
easy handles in flight, each re-added as soon as it finishes, until n are done; over HTTP/2 and HTTP/3 they
wait for the first connection to multiplex on it (CURLOPT_PIPEWAIT, as Courier and `curl -Z` do), over
HTTP/1.1 each opens its own. A warm-up as bench-courier's (max(c, min(100, n / 50)) requests) is not timed.
Output: one JSON line as BenchSupport's Report (client, workload, n, c, seconds, rps, bytes, errors,
p50_us/p99_us for seq, protocol, libcurl).
"""
import json
import math
import sys
import time

import pycurl

VERSIONS = {"3": pycurl.CURL_HTTP_VERSION_3ONLY, "2": pycurl.CURL_HTTP_VERSION_2_0,
            "1.1": pycurl.CURL_HTTP_VERSION_1_1}
SEEN = {pycurl.CURL_HTTP_VERSION_1_0: "HTTP/1.0", pycurl.CURL_HTTP_VERSION_1_1: "HTTP/1.1",
        pycurl.CURL_HTTP_VERSION_2_0: "HTTP/2", pycurl.CURL_HTTP_VERSION_3: "HTTP/3"}


def arguments(argv):
    args = dict(workload=argv[1], client="pycurl", url="", n=1000, c=1, cacert="", http="2")
    it = iter(argv[2:])
    for key in it:
        value = next(it)
        name = key.lstrip("-")
        if name in ("n", "c"):
            value = int(value)
        if name in args:
            args[name] = value
        # other options of the Swift clients (--out, --store...) do not apply
    if args["http"] not in VERSIONS:
        sys.exit("--http takes 3, 2 or 1.1")
    return args


class Transfer:
    def __init__(self, args):
        self.chunks = 0
        self.size = 0
        self.handle = pycurl.Curl()
        h = self.handle
        h.setopt(pycurl.URL, args["url"])
        h.setopt(pycurl.CAINFO, args["cacert"])
        h.setopt(pycurl.HTTP_VERSION, VERSIONS[args["http"]])
        h.setopt(pycurl.NOSIGNAL, 1)
        h.setopt(pycurl.WRITEFUNCTION, self.write)
        if args["http"] != "1.1":
            h.setopt(pycurl.PIPEWAIT, 1)

    def write(self, data):
        self.size += len(data)

    def result(self):
        """(ok, bytes, protocol) of the transfer that just ended; resets the byte count."""
        size, self.size = self.size, 0
        return self.handle.getinfo(pycurl.RESPONSE_CODE) == 200, size, SEEN.get(self.handle.getinfo(pycurl.INFO_HTTP_VERSION), "?")


def sequential(args, count, latencies=None):
    transfer = SEQ
    errors = size = 0
    protocol = None
    for _ in range(count):
        start = time.perf_counter_ns()
        try:
            transfer.handle.perform()
            ok, got, protocol = transfer.result()
        except pycurl.error:
            ok, got = False, 0
        if latencies is not None:
            latencies.append(time.perf_counter_ns() - start)
        errors += not ok
        size += got
    return errors, size, protocol


def concurrent(args, count):
    multi = MULTI
    pending = count
    errors = size = 0
    protocol = None
    for transfer in TRANSFERS[:min(args["c"], count)]:
        multi.add_handle(transfer.handle)
        pending -= 1
    running = min(args["c"], count)
    by_handle = {id(t.handle): t for t in TRANSFERS}
    while running:
        while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
            pass
        while True:
            queued, done, failed = multi.info_read()
            for handle in done:
                ok, got, protocol = by_handle[id(handle)].result()
                errors += not ok
                if not ok and errors < 3:
                    print(f"status {handle.getinfo(pycurl.RESPONSE_CODE)}", file=sys.stderr)
                size += got
            for handle, code, message in failed:
                by_handle[id(handle)].result()
                errors += 1
                if errors < 3:
                    print(f"libcurl error {code}: {message}", file=sys.stderr)
            for handle in done + [f[0] for f in failed]:
                multi.remove_handle(handle)
                if pending:
                    multi.add_handle(handle)
                    pending -= 1
                else:
                    running -= 1
            if not queued:
                break
        if running:
            multi.select(1.0)
    return errors, size, protocol


def main():
    global SEQ, MULTI, TRANSFERS
    args = arguments(sys.argv)
    warmup = max(args["c"], min(100, args["n"] // 50))
    report = dict(client=args["client"], workload=args["workload"], n=args["n"], c=args["c"])
    latencies = []
    if args["c"] == 1:
        SEQ = Transfer(args)
        sequential(args, warmup)
        t0 = time.perf_counter_ns()
        errors, size, protocol = sequential(args, args["n"], latencies)
    else:
        MULTI = pycurl.CurlMulti()
        MULTI.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        MULTI.setopt(pycurl.M_MAX_HOST_CONNECTIONS, max(args["c"], 8))
        TRANSFERS = [Transfer(args) for _ in range(args["c"])]
        concurrent(args, warmup)
        t0 = time.perf_counter_ns()
        errors, size, protocol = concurrent(args, args["n"])
    seconds = (time.perf_counter_ns() - t0) / 1e9
    report.update(seconds=seconds, rps=args["n"] / seconds, bytes=size, mbps=size / 1e6 / seconds, errors=errors)
    if latencies:
        latencies.sort()
        pick = lambda p: latencies[min(len(latencies) - 1, max(0, math.ceil(p * len(latencies)) - 1))] / 1e3
        report.update(p50_us=pick(0.50), p99_us=pick(0.99), max_us=latencies[-1] / 1e3)
    report.update(protocol=protocol or "?", libcurl=pycurl.version_info()[1])
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
