#!/usr/bin/env bash
# Prints the `swift test --filter` of the suites that drive the code Courier's speed-trick switch
# changes (Sources/Courier/Support/FastPaths.swift; docs/thread-map.md, "Fast paths"), for the
# ThreadSanitizer run with COURIER_FAST_PATHS=0 (.ci/run): the request executor and lifecycle
# (drains on the global queue, not the awaiting task), the curl transport's request paths
# (sends from the loop thread, no delivery batch), URLSession's, deduplication and the download
# store (drains from both transports), the HTTP cache and its disk store (no memo, no spare
# files), WebSockets (the poller reads for its consumer), per-trust-store TLS and the storms.
# CurlTransportTLSTests and WebSocketInteropTests stay out, as in the instrumented run with the
# tricks on (.ci/run says why).
suites=(
  RequestExecutorTests RequestLifecycleTests LifecycleBehaviourTests DeliveryLifecycleTests PerRequestMonitorTests
  CurlTransportFlowTests CurlTransportRequestTests CurlTransportFailureTests CurlTransportPassTests
  CurlResponseWaitTests CurlRawConnectionTests TLSConfigurationInteropTests
  URLSessionShutdownTests URLSessionFoundationQueueTests SessionShutdownTests
  DeduplicationTests DownloadStoreTests DownloadTests
  HTTPCacheEndToEndTests HTTPCacheThreadTests SpareFileTests ResponseCacheTests
  WebSocketFlowTests WebSocketInlineReadTests WebSocketClosingTests WebSocketKeepAliveTests WebSocketFaultStormTests
  CancellationStormTests
)
(IFS='|'; echo "${suites[*]}")
