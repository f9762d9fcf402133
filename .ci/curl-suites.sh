#!/usr/bin/env bash
# Prints the `swift test --filter` of the suites that exercise the curl transport itself, for
# running them again on another libcurl (.ci/run, .ci/fetch-libcurl.sh): the transport, HTTP/2,
# HTTP/3 and TLS interop, pause and backpressure, content decoding, hostile servers, WebSocket
# interop and the HTTP cache end to end.
suites=(
  CurlTransport CurlContentDecodingTests CurlLibraryVersionTests CurlRawConnectionTests
  CurlResponseWaitTests CurlOptionRefusalTests CurlReactorDescriptorTests
  HTTP2InteropTests HTTP2StreamInteropTests TLSConfigurationInteropTests HTTP3InteropTests
  DataStreamTests CompressedStreamTests
  HostileServerMatrixTests NonHTTPReplyTests ResponseLimitTests ResponseHeadLimitTests WireSyntaxTests
  WebSocketInteropTests HTTPCacheEndToEndTests HTTPCacheInteropTests
)
(IFS='|'; echo "${suites[*]}")
