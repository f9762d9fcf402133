import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension CourierTestServerTests {
    @Suite struct Bodies {
        @Test func gzipProducesAValidStoredStream() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(MockResponse.ok("123456789").gzip())
            server.enqueue(MockResponse(body: .pattern(count: 200_000, seed: 11)).gzip())
            server.enqueue(MockResponse.ok("").gzip())
            let client = try RawClient(port: server.port)

            let small = try client.get("/")
            #expect(small.headers["Content-Encoding"] == "gzip")
            #expect(small.headers["Content-Length"] == "\(small.body.count)")
            #expect(small.body.count == 10 + 5 + 9 + 8)
            // The standard CRC-32 check value of "123456789" is 0xCBF43926.
            #expect(Array(small.body.suffix(8)) == [0x26, 0x39, 0xF4, 0xCB, 9, 0, 0, 0])
            #expect(try StoredInflater.gunzip(small.body) == bytes("123456789"))

            let large = try client.get("/")
            let decoded = try StoredInflater.gunzip(large.body)
            #expect(decoded.count == 200_000 && matchesPattern(decoded, offset: 0, seed: 11))
            #expect(large.body.count == 10 + 200_000 + 5 * 4 + 8)

            let empty = try client.get("/")
            #expect(try StoredInflater.gunzip(empty.body).isEmpty)
            #expect(server.bytesSent() == Int64(small.body.count + large.body.count + empty.body.count))
        }

        @Test func deflateProducesAValidZlibStream() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(MockResponse.ok("Wikipedia").deflate())
            server.enqueue(MockResponse(body: .pattern(count: 70_000, seed: 12)).deflate().chunked(chunkSize: 4096))
            let client = try RawClient(port: server.port)

            let small = try client.get("/")
            #expect(small.headers["Content-Encoding"] == "deflate")
            // The Adler-32 of "Wikipedia" is 0x11E60398.
            #expect(Array(small.body.suffix(4)) == [0x11, 0xE6, 0x03, 0x98])
            #expect(try StoredInflater.unzlib(small.body) == bytes("Wikipedia"))

            let chunked = try client.get("/")
            #expect(chunked.headers["Content-Length"] == nil)
            let decoded = try StoredInflater.unzlib(chunked.body)
            #expect(decoded.count == 70_000 && matchesPattern(decoded, offset: 0, seed: 12))
        }

        @Test func patternHelpersAgreeAtAnyOffset() {
            let seed: UInt64 = 0xDEAD_BEEF
            let block = PatternBody.data(offset: 3, count: 100, seed: seed)
            for index in 0..<100 {
                #expect(block[index] == PatternBody.byte(at: Int64(3 + index), seed: seed))
            }
            #expect(PatternBody.data(offset: 0, count: 64, seed: 1) == PatternBody.data(offset: 0, count: 64, seed: 1))
            #expect(PatternBody.data(offset: 0, count: 64, seed: 1) != PatternBody.data(offset: 0, count: 64, seed: 2))
            #expect(PatternBody.data(offset: 0, count: 64, seed: 1) != PatternBody.data(offset: 64, count: 64, seed: 1))
            let far: Int64 = (1 << 30) - 5
            #expect(PatternBody.data(offset: far, count: 5, seed: 7) == Data((0..<5).map { PatternBody.byte(at: far + $0, seed: 7) }))
            #expect(PatternBody.data(offset: 0, count: 0, seed: 7).isEmpty)
        }

        @Test func patternBodyOfAGibibyteStreamsWithoutBeingHeldInMemory() async throws {
            try await PeakMemoryGate.shared.run {
                let server = try TestServer()
                defer { expectClean(server.shutdown()) }
                // ThreadSanitizer instruments every 8-byte store of the generator, which makes a full
                // gibibyte take half a minute; a quarter of it exercises the same streaming path.
                let size: Int64 = isRunningUnderThreadSanitizer ? 1 << 28 : 1 << 30
                server.enqueue(MockResponse(body: .pattern(count: size, seed: 99)))
                PeakMemoryGate.resetPeak()
                let peakBefore = peakResidentBytes()
                let client = try RawClient(port: server.port)
                try client.sendRequest("GET", "/gib")
                #expect(try client.readHead().headers["Content-Length"] == "\(size)")
                var received: Int64 = 0
                var tail: [UInt8] = []
                while received < size, case .success(let chunk) = client.readSome() {
                    received += Int64(chunk.count)
                    if received > size - 8192 { tail = Array((tail + chunk).suffix(4096)) }
                }
                #expect(received == size)
                #expect(matchesPattern(tail, offset: size - 4096, seed: 99))
                // The peak is the whole test process's, so the bound is checked with the test alone
                // (`COURIER_RESOURCE_TESTS=1`, a step of `.ci/run`): beside it, ordinary parallel
                // tests allocate too, and under ThreadSanitizer the shadow memory counts (a CI run
                // measured 276,742,144 bytes of growth there against 268,435,456). A server that
                // held the body would add all of it, so "less than half the body" tells the two apart.
                let growth = peakResidentBytes() - peakBefore
                TestEnvironment.note("1 GiB pattern body: peak RSS grew by \(growth >> 20) MiB")
                if TestEnvironment.measuresAlone() {
                    #expect(growth < Int(size / 2), "peak RSS grew by \(growth) bytes")
                }
            }
        }

        @Test func headerFieldsKeepOrderAndCompareCaseInsensitively() {
            var fields: HeaderFields = ["Set-Cookie": "a=1", "content-type": "text/plain"]
            fields.add("SET-COOKIE", "b=2")
            #expect(fields["set-cookie"] == "a=1")
            #expect(fields.values(for: "Set-Cookie") == ["a=1", "b=2"])
            #expect(fields.map(\.name) == ["Set-Cookie", "content-type", "SET-COOKIE"])
            fields.set("Set-Cookie", "c=3")
            #expect(fields.values(for: "set-cookie") == ["c=3"] && fields.count == 2)
            fields.remove("CONTENT-TYPE")
            #expect(!fields.contains("content-type") && fields.count == 1)
        }
    }
}

/// The process's peak resident set size (VmHWM), in bytes.
func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes * 1024
}

/// Whether the process was built with ThreadSanitizer (its runtime defines `__tsan_init`).
let isRunningUnderThreadSanitizer: Bool = {
    #if os(Linux)
    let defaultHandle = UnsafeMutableRawPointer(bitPattern: 0)
    #else
    let defaultHandle = UnsafeMutableRawPointer(bitPattern: -2)
    #endif
    return dlsym(defaultHandle, "__tsan_init") != nil
}()
