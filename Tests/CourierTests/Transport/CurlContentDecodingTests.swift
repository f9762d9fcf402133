@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking
import CourierTestSupport
import Foundation
import Testing

/// The curl transport undoes content codings itself (libcurl's decoding is off), producing decoded
/// bytes only as far as the flow-control window allows.
@Suite("Curl transport content decoding")
struct CurlContentDecodingTests {
    /// A response with `coding` and `wire` as its body.
    static func coded(_ wire: Data, _ coding: String) -> MockResponse {
        MockResponse.ok(wire).header("Content-Encoding", coding)
    }

    @Test("gzip, raw and zlib deflate, brotli, zstd and stacked codings decode byte-exact")
    func everyCoding() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let body = CompressibleBody(runs: [(0x41, 70_000), (0x00, 3), (0x7A, 200_000), (0xFF, 1)])
        let expected = Data(body.runs.flatMap { repeatElement($0.byte, count: $0.count) })
        let twoFrames = body.zstd + CompressibleBody(runs: [(1, 5)]).zstd
        let cases: [(coding: String, wire: Data, decoded: Data)] = [
            ("gzip", body.gzip, expected), ("x-gzip", body.gzip, expected), ("deflate", body.zlib, expected),
            ("deflate", body.rawDeflate, expected), ("br", body.brotli, expected), ("zstd", body.zstd, expected),
            ("zstd", twoFrames, expected + Data(repeating: 1, count: 5)),
            ("gzip, identity, zstd", CompressibleBody.runs(of: body.gzip).zstd, expected),
            ("GZIP , Deflate", CompressibleBody.runs(of: body.gzip).zlib, expected),
        ]
        for (coding, wire, decoded) in cases {
            server.enqueue(Self.coded(wire, coding))
            let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/coded")), on: transport)
            CurlTestSupport.expectContract(result)
            #expect(result.error == nil, "\(coding): \(result.error.map { "\($0)" } ?? "")")
            #expect(result.body == decoded, "\(coding)")
            #expect(result.head?.headers["Content-Encoding"] == coding)
        }
        // With no Accept-Encoding of its own the request advertises every coding this process decodes.
        #expect(try await server.takeRequest().headers["Accept-Encoding"] == CurlContentCoding.advertised)
    }

    /// 400 JSON lines, 27,246 bytes.
    static let jsonLines = Data(
        (0..<400).map { index in
            #"{"id":\#(index),"name":"courier item \#(index)","tags":["a","b","c"],"ok":\#(index % 3 == 0)}"# + "\n"
        }.joined().utf8)
    /// ``jsonLines`` as libbrotlienc 1.0.9 compresses it (quality 11, window 22).
    static let brotliJSONLines =
        "G21qIBwFbqyxizoF7W+SYWAbo9SXm184DIJV1OFK5U9PlHwEpdc6LApd+ScbhLO6wr98NbtOk7BBKBQ4jKxuTjWjyBG5KYf8KM6ROJXS+vOhxPtR6V98vyn8o9pHnf/e13cF2w/+GH3+c/C+aWz0968EDM+fB/ZXAA2AK2wC1AjcGJIEtlloU7jk/sc8X5k3/5gy0Qh20IowoiiSuLEkimy00qZyzQ3wvoRHZmUMgEuAMKKokTiyJIpss9Kocs0N+K7wDTjHnEcQQbhDokjiyJImstFKo8olN9A71ntkohHsgDCiKJK4sSSKbLTSpnLNDfy+5EdmZQyMS4YwoqiROLIkimyz0qhyzQ3yruQNMseZRxBBuEOiSOLIkiay0UqjyiU32He875GJRrADwoiiSOLGkiiy0UqbyjU36PtSH5mVMSguFcKIokbiyJIoss1Ko8o1N7h35d7g5vjmEUQQ7pAokjiypIlstNKocp965f5r+UBeHZpqCEtoiFiRVIkcmVKFtlpqVLroJvO+NQ/NzpgMbg2IFUmRyJUpVWijpVali26CdwdvgjnHPIQKxCUiVSJXpkShrZZala65Cd8530NTDWEJiBVJlciRKVVoq6VGpYtuovctPTQ7YyLcEogVSZHIlSlVaKOlVqWLbuJ3x2/iOfc8hArEJSJVIlemRKGtllqVrrlJ3nneQ1MNYQmIFUmVyJEpVWirpUali26y71v70OyMyeLWgliRFIlcmVKFNlpqVbroJn13+iad885DqEBcIlIlcmVKFNpqqVXpmpvcO7/30FRDWAJiRVIlcmRKFdpqqVHpPvap/q9l6w2aD63fell4eYNYkbSkhsiVKVVoo6VWpYtuMu/OvMnM+cxDqEBcIlIlcmVKFNpqqVXpmpvgneM9NNUQloBYkVSJHJlShbZaalS66CZ83+JDszMmxC2CWJEUiVyZUoU2WmpVuugmenf0JppzzUOoQFwiUiVyZUoU2mqpVemam/id+z001RCWgFiRVIkcmVKFtlpqVLroJnnfykOzMybBrYBYkRSJXJlShTZaalW66Cb77uyb7JzvPIQKxCUiVSJXpkShrZZala65Sd9530NTDWEJiBVJlciRKVVoq6VGpYtucu9b99DsjMnh1oFYkRSJXJlShTZaalW6j13x82v5UH7rZeHl1SFUIC6xIVIlcmVKFNpqqVXpmpvMO5/30FRDWAJiRVIlcmRKFdpqqVHpopvgfQsPzc6YALcAYkVSJHJlShXaaKlV6aKb8N3hm3DOOQ+hAnGJSJXIlSlRaKulVqVrbqJ3rvfQVENYAmJFUiVyZEoV2mqpUemim/h9yw/NzpgYtwxiRVIkcmVKFdpoqVXpopvk3cmbZM4zD6ECcYlIlciVKVFoq6VWpWtusu9830NTDWEJiBVJlciRKVVoq6VGpYtu0vetPjQ7Y1LcKogVSZHIlSlVaKOlVqWLbnLvzr3JzfnNQ6hAXCJSJXJlShTaaqlV5Q7vAA=="
    /// ``jsonLines`` as libzstd 1.5.4 compresses it (level 19).
    static let zstdJSONLines =
        "KLUv/WBuaf0pAEqEIA8bYE2qOY5nfYJbRyg5OorAGi0t2UlkRdEhKAxyEgHkAOEALLJIIokcciikkJOTJUuSJIMM8oIXFrRgBStIQYoJTlCCEjx4NNgggwxGMIJ3d3Z2dUVHNzcnJ9/X6/F4cXFnZ2ZWVkZGNjZiYttWq9FoYWFXZ2VVVUVFU1NSUtetFosVFXV0ZGRUVEREQ0NCMk2lEokUFHRzY2M1NTQ0MyMj8zydDocTE3NyJiYlJSQ0MiIislypUCghIfdt23XR9DzL8t8753F8vVqtWqVSpyOV3tu2LBuNHs9oLBaJNBwKhfOyJMlg8M6simhG5NsIDBoQkAAqHJgAQQLDYcGDw8KAQ4HDwoHAYeHQcBDAcIiQoEHCYeEQARockKAgAIQDCiBMeFDgwHA40KDBwWEhGA4GFBwoBGTJYIO96EUtalHRilKUohOdkKhEjx5ttFFGGY1oRO94Z0c71rGOdKSb4xzlKMePX4898shjHOPOeEYzmrGMZWQk4xjHKEaxjRtrrJFGWhjDeMUrWtGqilWkIhWnOCVFKV682GKLRRajGMUjHo1YxCISkWiIQxSiECdOJZZIIolBDLrhDW1owxrW0JCGM5yhDGUePuywQw45MYzhCU9oQpMSlpCEJBzhiAhFuHBhhRUKKQxhCG/eNm3WrEmTnjlTpsznd3ZycsaMr7zSSiurrFJJ5ZRTSim9vGzZkiUbZZRHHmmkBU88scQSx8eNGzNmHHHEd72rXe3qWle60nWuc3KV69evvfZ45TWucT3r1axlLStZycY6VrGKdetWa6200hrWsKte1apWrWoVVak61alKVerq1VZbZZUV1age9ahGNSpqUYlK1KEOCVWoU6eWWiKV1KAG9aY3NrVpTWtKU5qZzlSmMn36dNopp5zGNOakJzWpSUtaQlKSjnSkIhVZurTSSimlhDSkd+/atevWpUt37ixX7vfb23l548a99mpttdVSS512Wmmlvb1t27JlG2302GONNbbYIrHEDjussMLZ2bJlA3ffbbfdddfRTffcc8st9/3duzdvXtxxn3222VZ22WSTPfaILfb2du0abdphh331ldVWV1011VRTTy211NdX69asWUcddfTRRhtddBHRRA89tNBC09OlS5MmBR30zTfbbFNzzTTTPPOMzDI/P3fucOYcc8wnn7zJJZdMMsnII4ss8vJSuTJlyiGH3N/b29fX9PTz8/Ly//f7fB4ff/26dWv16tSpT59Kl36/t7fs7NGjHz8aN168OHHi8OHChc9neTk5efDgxRdbbHHFFRRTBIMjqCJAoPr2/w3CVyMbYxJQEEgQGEHg6QUnBAiBQtDwA0HYGEOGoh5zjLU3BkuSEFYkgaJpR6XoTFS2JWBQEwAVO+GzAlKOrJCZiGQd0pCygKjkGbFmcxOVLQlhJSkomnZUxX7BHGOSsIg50cC0mQB8EojQTEKqelUE1YZidAQEQXMdRXGqNC4LgdgQEFWnGgjVeylMlhfVJrBW2CQQoZmEVvWqCKoNxegICEKCIgiKhVjsCKDCcZKI8d1QKhaKWVEMRbEJMBU2CURoJqFVvSqCakMxOgKCoLmOojhVGpeFQGwIiKpTDYTqvRQmSgCxU5iiNAGhoTgEseBlU8b9bjF0f2J6pQFFKbKKqCFNlMG6RR1FTBVWiyWXIpzuIgJvU8AiH9GgSK/RL2hnD2O15bPecqi6wOlKgYqmAHFTQ5oog3WLOioyBSzykQZFejrhltGkBg0MB6osgy29Jcp/Ib3rJsjFv5AZ8oeY6kzkf4ABQGsF"

    @Test("real brotli and zstd output (their encoders at the highest levels) decodes")
    func realBrotliAndZstd() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        #expect(Self.jsonLines.count == 27_246)
        for (coding, text) in [("br", Self.brotliJSONLines), ("zstd", Self.zstdJSONLines)] {
            let wire = try #require(Data(base64Encoded: text))
            server.enqueue(Self.coded(wire, coding))
            let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/real")), on: transport)
            CurlTestSupport.expectContract(result)
            #expect(result.error == nil, "\(coding): \(result.error.map { "\($0)" } ?? "")")
            #expect(result.body == Self.jsonLines, "\(coding)")
        }
    }

    @Test("a body of ratio 1:1000 stays within the window of a sink that acknowledges slowly")
    func decodedBytesStayWithinTheWindow() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        // 16 MiB from about 17 KB (small enough for the TSan run).
        let body = CompressibleBody.segments(64, of: 256 << 10)
        let window = 256 << 10
        server.enqueue(Self.coded(body.gzip, "gzip"))
        // Checks each chunk where it arrives, and the backlog the transport let build up.
        struct Seen { var offset = 0, acknowledged = 0, largestBacklog = 0, mismatch: Int? }
        let seen = Locked(Seen())
        let sink = CurlRecordingSink(autoAcknowledge: false, keepsBody: false) { event in
            guard case .body(let chunk) = event else { return }
            seen.withLock { seen in
                if seen.mismatch == nil { seen.mismatch = body.firstMismatch(in: chunk, at: seen.offset) }
                seen.offset += chunk.count
                seen.largestBacklog = max(seen.largestBacklog, seen.offset - seen.acknowledged)
            }
        }
        let (_, transfer) = CurlTestSupport.start(TransportRequest(url: server.url("/gz"), flowControlWindow: window), on: transport, sink: sink)
        // The consumer takes 64 KiB at a time, and only once half a window is waiting (the
        // transport then has the window full, or has finished): decoding must wait for it, however
        // much the coded bytes in hand would give. The test counts an acknowledgement only after
        // the transport has it, so the backlog the sink computes is never less than the real one
        // (and at most one step more: the transport may deliver before the test counts the step).
        var acknowledged = 0
        while true {
            let floor = acknowledged
            try await sink.wait { $0.received >= floor + window / 2 || $0.isCompleted }
            let (received, completed) = sink.progress
            if completed, received == acknowledged { break }
            let step = min(64 << 10, received - acknowledged)
            transfer.acknowledge(step)
            acknowledged += step
            seen.withLock { $0.acknowledged = acknowledged }
        }
        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        let final = seen.withLock { $0 }
        #expect(final.offset == body.decodedCount)
        #expect(final.mismatch == nil)
        #expect(final.largestBacklog <= window + (64 << 10), "backlog \(final.largestBacklog)")
    }

    @Test("suspend stops the deliveries of a chunk that decodes to many; resume finishes byte-exact")
    func suspendMidChunk() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        // One read of this body decodes to many 64 KiB deliveries.
        let body = CompressibleBody.segments(16, of: 1 << 20)
        server.enqueue(Self.coded(body.gzip, "gzip"))
        struct Seen { var offset = 0, suspended = false, suspendedOnce = false, deliveredWhileSuspended = 0, mismatch: Int? }
        let seen = Locked(Seen())
        let slot = Locked<(any TransportTransfer)?>(nil)
        let sink = CurlRecordingSink(keepsBody: false) { event in
            guard case .body(let chunk) = event else { return }
            let suspendNow = seen.withLock { seen -> Bool in
                if seen.mismatch == nil { seen.mismatch = body.firstMismatch(in: chunk, at: seen.offset) }
                if seen.suspended { seen.deliveredWhileSuspended += 1 }
                seen.offset += chunk.count
                return seen.offset >= 1 << 20 && !seen.suspendedOnce
            }
            // On the loop's thread, inside the write callback: no later delivery of this chunk may
            // follow. (The handle is in the slot once `start` returned; until then, a later delivery tries.)
            guard suspendNow, let transfer = slot.withLock({ $0 }) else { return }
            seen.withLock { seen in
                seen.suspended = true
                seen.suspendedOnce = true
            }
            transfer.suspend()
        }
        let (_, transfer) = CurlTestSupport.start(
            TransportRequest(url: server.url("/gz"), flowControlWindow: 64 << 20),
            on: transport, sink: sink)
        slot.withLock { $0 = transfer }
        #expect(await eventually { seen.withLock { $0.suspendedOnce } || sink.snapshot.isCompleted })
        #expect(seen.withLock { $0.suspendedOnce }, "suspended before the body ended")
        // The flag is cleared before resume(), so only a delivery made while suspended counts.
        let whileSuspended = seen.withLock { seen in
            seen.suspended = false
            return seen.deliveredWhileSuspended
        }
        #expect(whileSuspended == 0)
        transfer.resume()
        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        let final = seen.withLock { $0 }
        #expect(final.offset == body.decodedCount)
        #expect(final.mismatch == nil)
    }

    @Test("a truncated, corrupt or overlong coded body fails as an invalid response")
    func brokenBodiesFail() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let body = CompressibleBody.segments(8, of: 1 << 20)
        let gzip = body.gzip
        var corrupt = gzip
        corrupt[gzip.count / 2] ^= 0xFF
        corrupt[gzip.count / 2 + 1] ^= 0x55
        let cases: [(String, MockResponse, String)] = [
            ("truncated", Self.coded(gzip.prefix(gzip.count / 2), "gzip"), "ended before the end of its gzip data"),
            ("corrupt", Self.coded(corrupt, "gzip"), "not valid gzip data"),
            ("trailing", Self.coded(gzip + Data("more".utf8), "gzip"), "goes on after the end of its gzip data"),
            ("truncated stack", Self.coded(CompressibleBody.runs(of: gzip).zstd.dropLast(1), "gzip, zstd"), "ended before the end"),
            ("unknown", Self.coded(Data("abc".utf8), "compress"), "cannot decode: compress"),
            ("too many", Self.coded(Data("abc".utf8), "gzip, gzip, gzip, gzip, gzip, gzip"), "more than 5 content codings"),
        ]
        for (name, response, message) in cases {
            server.enqueue(response)
            let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/broken")), on: transport)
            CurlTestSupport.expectContract(result)
            #expect(result.error?.kind == .invalidResponse, "\(name): \(result.error.map { "\($0)" } ?? "no error")")
            #expect(result.error?.message.contains(message) == true, "\(name): \(result.error?.message ?? "")")
        }
    }

    @Test("no body, identity, and decoding turned off need no decoder")
    func nothingToDecode() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let gzip = CompressibleBody.segments(2, of: 1000).gzip
        server.enqueue([
            MockResponse(status: 204).header("Content-Encoding", "gzip"),
            Self.coded(gzip, "gzip"),
            Self.coded(Data("plain".utf8), "identity"),
            Self.coded(Data("odd".utf8), "compress"),
            Self.coded(gzip, "gzip"),
        ])
        let empty = try await CurlTestSupport.run(TransportRequest(url: server.url("/none")), on: transport)
        #expect(empty.error == nil)
        #expect(empty.body.isEmpty)
        let head = try await CurlTestSupport.run(TransportRequest(url: server.url("/head"), method: .head), on: transport)
        #expect(head.error == nil)
        let identity = try await CurlTestSupport.run(TransportRequest(url: server.url("/identity")), on: transport)
        #expect(identity.body == Data("plain".utf8))
        let raw = try await CurlTestSupport.run(TransportRequest(url: server.url("/raw"), automaticDecompression: false), on: transport)
        #expect(raw.error == nil)
        #expect(raw.body == Data("odd".utf8))
        let rawGzip = try await CurlTestSupport.run(TransportRequest(url: server.url("/raw"), automaticDecompression: false), on: transport)
        #expect(rawGzip.body == gzip)
    }
}
