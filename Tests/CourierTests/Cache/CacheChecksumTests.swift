import Foundation
import Testing
@testable import Courier

extension ResponseCacheStore {
    /// The head files' checksum (``CacheChecksum``): stable (files written by one build are read by
    /// the next), and sensitive to every change a crash or a disk can make.
    @Suite("ResponseCacheStore: checksum") struct CacheChecksumTests {
        static func checksum(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { CacheChecksum.of($0) } }

        @Test func valuesArePinned() {
            // Computed by hand from the algorithm (a Python model of it). A change here makes every
            // stored head a miss: bump CacheEntryFormat's version with it.
            let rows: [([UInt8], String)] = [
                ([], "2c610f105fb75790"),
                (Array("abc".utf8), "cd3c1ffcd4a2c7f6"),
                (Array(0..<20), "c90732df6579c51e"),
            ]
            for (input, hex) in rows {
                #expect(CacheChecksum.hex(of: input) == hex, "\(input)")
                #expect(CacheChecksum.hex(of: Data(input)) == hex, "the same over Data")
                #expect(CacheChecksum.hex(of: Data([9] + input).dropFirst()) == hex, "and over a slice")
            }
        }

        @Test func everySingleBitFlipChangesTheChecksum() {
            var bytes = (0..<1027).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let original = Self.checksum(bytes)
            var unchanged = 0
            for index in bytes.indices {
                for bit in 0..<8 {
                    bytes[index] ^= 1 << bit
                    if Self.checksum(bytes) == original { unchanged += 1 }
                    bytes[index] ^= 1 << bit
                }
            }
            #expect(unchanged == 0)
        }

        @Test func truncationZeroPaddingAndSwappedWordsChangeTheChecksum() {
            let bytes = (0..<64).map { UInt8($0) }
            let original = Self.checksum(bytes)
            for cut in 0..<bytes.count { #expect(Self.checksum(Array(bytes.prefix(cut))) != original, "cut to \(cut)") }
            #expect(Self.checksum(bytes + [0]) != original, "a zero byte appended")
            #expect(Self.checksum(Array(repeating: 0, count: 16)) != Self.checksum(Array(repeating: 0, count: 24)))
            let swapped = Array(bytes[8..<16] + bytes[0..<8] + bytes[16...])
            #expect(Self.checksum(swapped) != original, "two words swapped")
        }
    }
}

extension ResponseCacheStore {
    /// The head file's metadata line, written and read with Courier's JSON parser and writer: the
    /// same JSON `Codable` writes and reads, both ways, and a field of the wrong type is no entry.
    @Suite("ResponseCacheStore: metadata line") struct MetadataLineTests {
        static let samples: [CacheEntryFormat.Metadata] = [
            .init(
                key: "HTTP GET https://example.com/a?b=1", statusCode: 200, headers: [["ETag", "\"x\""], ["Vary", "Accept"]],
                requestTime: 1_750_000_000.123456, responseTime: 1_750_000_000.987654321, varyingRequestHeaders: ["accept": "text/html"],
                requestHadAuthorization: true, url: "https://example.com/a?b=1", version: 7, bodyFile: nil, bodyLength: 10_240),
            .init(
                key: "k", statusCode: 404, headers: [], requestTime: 0.1, responseTime: -3.5e-7, varyingRequestHeaders: nil,
                requestHadAuthorization: false, url: nil, version: nil,
                bodyFile: String(repeating: "a", count: 64) + "-" + UUID().uuidString.lowercased() + ".body", bodyLength: 1 << 40),
            .init(
                key: "é \u{1F600} \"quoted\" \\ \n", statusCode: 203, headers: [["X-Odd", "tab\there"]], requestTime: 1e300,
                responseTime: .leastNonzeroMagnitude, varyingRequestHeaders: [:], requestHadAuthorization: false, url: "", version: -1, bodyFile: nil,
                bodyLength: 0),
        ]

        @Test(arguments: samples)
        func roundTripsAndReadsWhatCodableWrites(_ metadata: CacheEntryFormat.Metadata) throws {
            let ours = Data(metadata.json.description.utf8)
            #expect(try JSONDecoder().decode(CacheEntryFormat.Metadata.self, from: ours) == metadata, "Codable reads ours")
            #expect(CacheEntryFormat.Metadata(json: try JSONParser.parse(ours)) == metadata, "we read ours")
            let codable = try JSONEncoder().encode(metadata)
            #expect(CacheEntryFormat.Metadata(json: try JSONParser.parse(codable)) == metadata, "we read Codable's")
        }

        @Test(arguments: [
            #"{"key":1,"statusCode":200,"headers":[],"requestTime":0,"responseTime":0,"requestHadAuthorization":false,"bodyLength":0}"#,
            #"{"key":"k","statusCode":200.5,"headers":[],"requestTime":0,"responseTime":0,"requestHadAuthorization":false,"bodyLength":0}"#,
            #"{"key":"k","statusCode":200,"headers":[["a",1]],"requestTime":0,"responseTime":0,"requestHadAuthorization":false,"bodyLength":0}"#,
            #"{"key":"k","statusCode":200,"headers":[],"requestTime":0,"responseTime":0,"requestHadAuthorization":false,"bodyLength":0.5}"#,
            #"{"key":"k","statusCode":200,"headers":[],"requestTime":0,"responseTime":0,"requestHadAuthorization":false,"bodyLength":0,"url":3}"#,
            #"{"key":"k","statusCode":200,"headers":[],"requestTime":0,"responseTime":0,"requestHadAuthorization":false,"bodyLength":0,"varyingRequestHeaders":{"a":1}}"#,
            #"{"key":"k","statusCode":200,"headers":[],"requestTime":0,"responseTime":0,"bodyLength":0}"#,
            #"[]"#,
        ])
        func aFieldMissingOrOfTheWrongTypeIsNoMetadata(_ text: String) throws {
            #expect(CacheEntryFormat.Metadata(json: try JSONParser.parse(Data(text.utf8))) == nil)
        }
    }
}
