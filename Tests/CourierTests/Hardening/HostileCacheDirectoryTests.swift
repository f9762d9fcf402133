import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierLocking
import CourierTestServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hostile-server matrix's cache-directory rows (issue 36): the HTTP cache's disk directory is
/// input too. Each case stores a response through a request, plants one thing in the directory
/// where a store file is, and sends the request again on both transports (behind a watchdog: a
/// hang fails with a message). Every case checks the outcome, that nothing outside the directory
/// changed, and that later requests (which reuse spare files) still work.
///
/// | Case | Second request | Then |
/// | --- | --- | --- |
/// | head replaced by a link to a file outside | network (miss) | the link's target is never written, read or served |
/// | body file replaced by a link to a valid copy outside | network (miss) | the copy is never read |
/// | a link named like a temporary file | (a scan) | the name goes, the target stays |
/// | head, body or temporary file replaced by a FIFO | network (miss), no hang | the scan removes the FIFO |
/// | body replaced by other bytes of the same length | fails with `.fileSystem` (damaged), no corrupted byte | entry removed; the next request is a network one, stored again |
/// | a directory where the head should be | network, every time | the directory stays where it is |
/// | head owned by another user (root only) | network (miss) | replaced by the store's own file |
/// | cache directory owned by another user (root only) | network, every time | nothing written there |
///
/// The cases run one at a time: twenty sessions of ten requests each, all at once, added enough to
/// the suite's start on two cores to push other suites' "ended in time" bounds.
@Suite(.serialized) struct HostileCacheDirectoryTests {
    typealias Fixtures = CacheDirectoryFixtures

    enum Plant: String, Sendable, CaseIterable, CustomTestStringConvertible {
        case headLinkedOutside, bodyLinkedOutside, temporaryLink
        case headFIFO, bodyFIFO, temporaryFIFO
        case bodySwappedSameLength, directoryForHead, headOwnedByAnother, directoryOwnedByAnother

        var testDescription: String { rawValue }
        var needsRoot: Bool { self == .headOwnedByAnother || self == .directoryOwnedByAnother }
        /// Whether the stored body must live in a body file of its own.
        var needsBodyFile: Bool { [.bodyLinkedOutside, .bodyFIFO, .bodySwappedSameLength].contains(self) }
    }

    static let small = Data("a small body, stored inline".utf8)
    /// Past the 64 KiB kept inline: a body file of its own.
    static let large = PatternBody.data(offset: 0, count: 100 << 10, seed: 63)

    /// What the planted thing must never change.
    final class Outside: Sendable {
        let victim: Fixtures.Victim
        let copy: URL
        init(_ label: String) throws {
            victim = try Fixtures.Victim.make(label)
            copy = victim.url.deletingLastPathComponent().appendingPathComponent("copy.body")
        }
    }

    @Test(arguments: TransportUnderTest.available, Plant.allCases)
    func cacheDirectoryCase(transport: TransportUnderTest, plant: Plant) async throws {
        if plant.needsRoot, !Fixtures.canChown { return }
        let directory = makeTemporaryDirectory("hostile-cache-\(plant.rawValue)")
        let outside = try Outside(plant.rawValue)
        defer {
            try? FileManager.default.removeItem(at: directory)
            outside.victim.remove()
        }
        try await withServer { server async throws in
            let body = plant.needsBodyFile ? Self.large : Self.small
            server.route("/r") { _ in MockResponse(status: 200, body: .data(body)).header("Cache-Control", "max-age=600") }
            for index in 0..<6 { server.route("/other\(index)") { _ in MockResponse.text("\(index)").header("Cache-Control", "max-age=600") } }
            var configuration = appConfiguration(transport)
            configuration.httpCache = .enabled
            // No memory tier: every request reads the directory. The planted thing is found by a
            // new cache on the directory, as by the next process.
            let firstCache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let firstSession = Session(
                configuration: configuration, baseURL: server.baseURL, responseCache: firstCache, callbackQueue: testCallbackQueue)
            let session = Session(configuration: configuration, baseURL: server.baseURL, responseCache: cache, callbackQueue: testCallbackQueue)
            let release: @Sendable () -> Void = { Fixtures.releaseFIFOReaders(in: directory) }
            @Sendable func get(_ path: String, on session: Session? = nil) async -> DataResponse<Data, CourierError>? {
                await Fixtures.awaitWithWatchdog("GET \(path) with \(plant)", release: release) {
                    await (session ?? firstSession).request(path).serializingData().response
                }
            }
            let first = await get("r")
            #expect(first?.value == body && first?.source == .network)
            let key = HTTPCache.key(for: server.url("/r"), authorization: nil)
            let head = directory.appendingPathComponent("\(key.fileName).response")
            let bodyFile = StoreFixtures.bodyFiles(in: directory).first.map { directory.appendingPathComponent($0) }
            let temporary = directory.appendingPathComponent("courier-00112233445566778899aabbccddeeff.tmp")

            switch plant {
            case .headLinkedOutside: try Fixtures.replaceWithLink(head, to: outside.victim.url)
            case .bodyLinkedOutside:
                let file = try #require(bodyFile)
                try FileManager.default.copyItem(at: file, to: outside.copy)
                try Fixtures.replaceWithLink(file, to: outside.copy)
            case .temporaryLink: try Fixtures.replaceWithLink(temporary, to: outside.victim.url)
            case .headFIFO: try Fixtures.replaceWithFIFO(head)
            case .bodyFIFO: try Fixtures.replaceWithFIFO(try #require(bodyFile))
            case .temporaryFIFO: try Fixtures.replaceWithFIFO(temporary)
            case .bodySwappedSameLength:
                let file = try #require(bodyFile)
                var bytes = try Data(contentsOf: file)
                let start = bytes.startIndex + CacheEntryFormat.bodyMagic.count + 80_000
                bytes.replaceSubrange(start..<(start + 1000), with: Data(repeating: 0x42, count: 1000))
                try bytes.write(to: file)
            case .directoryForHead: try Fixtures.replaceWithDirectory(head)
            case .headOwnedByAnother: try Fixtures.giveAway(head)
            case .directoryOwnedByAnother: try Fixtures.giveAway(directory)
            }
            let copied = try? Data(contentsOf: outside.copy)

            let second = await get("r", on: session)
            switch plant {
            case .temporaryLink, .temporaryFIFO:
                #expect(second?.source == .cache, "a planted temporary name changes nothing for the entry")
            case .bodySwappedSameLength:
                #expect(second?.error?.kind == .fileSystem, "\(second?.error.map { "\($0)" } ?? "succeeded")")
                #expect(second?.error?.message.contains("damaged") == true)
                let third = await get("r", on: session)
                #expect(third?.value == body && third?.source == .network, "the damaged entry was removed")
                #expect(await get("r", on: session)?.source == .cache, "and stored again")
            default:
                #expect(second?.value == body, "\(second?.error.map { "\($0)" } ?? "")")
                #expect(second?.source == .network)
            }
            if case .directoryOwnedByAnother = plant {
                #expect(await get("r", on: session)?.source == .network, "another user's directory is not used")
            }

            // More writes, which take spare files when the fast paths are on, and a scan.
            for index in 0..<6 { #expect(await get("other\(index)", on: session)?.value == Data("\(index)".utf8)) }
            _ = await Fixtures.awaitWithWatchdog("a scan with \(plant)", release: release) { cache.scanDisk() }

            #expect(outside.victim.isIntact, "the file outside the cache directory was written")
            if let copied { #expect((try? Data(contentsOf: outside.copy)) == copied) }
            switch plant {
            case .headFIFO, .bodyFIFO, .temporaryFIFO:
                let fifos = StoreFixtures.names(in: directory).filter { Fixtures.kind(directory.appendingPathComponent($0)) == S_IFIFO }
                #expect(fifos.isEmpty, "the scan removed \(fifos)")
            case .headLinkedOutside, .bodyLinkedOutside, .temporaryLink:
                let links = StoreFixtures.names(in: directory).filter { Fixtures.kind(directory.appendingPathComponent($0)) == S_IFLNK }
                #expect(links.isEmpty, "the scan removed \(links)")
            case .directoryForHead:
                #expect(Fixtures.kind(head) == S_IFDIR, "the directory stays")
            default:
                break
            }
        }
    }
}
