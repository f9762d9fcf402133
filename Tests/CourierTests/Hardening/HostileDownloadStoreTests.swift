import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hostile-server matrix's download-store rows (issue 36): the files Courier keeps on disk for
/// downloads are input too. Each case leaves a partial download in a store directory (a `.part`
/// file with a third of a resource and its journal, as a killed process leaves them), plants one
/// thing in place of a store file, the store directory, the session's temporary directory or the
/// destination, and downloads the resource with `resumable: true` on both transports (behind a
/// watchdog: a hang fails with a message). Every case checks the outcome and that nothing outside
/// the store changed. The store's own ``DownloadStoreHostileDirectoryTests`` drive the same
/// without requests.
///
/// | Case | The download | Then |
/// | --- | --- | --- |
/// | partial replaced by a link to a file outside | starts over (no `Range`) | the link's target is never written |
/// | partial hard-linked to a file outside | starts over | the other file is never written |
/// | journal replaced by a link to a valid journal outside | starts over | the journal outside is never read |
/// | journal's temporary file replaced by a link to a file outside | resumes | the target is never written |
/// | lock file replaced by a dangling link | resumes | no file appears where the link points |
/// | journal, its temporary file, the lock or the partial replaced by a FIFO | resumes, or starts over (journal, partial); no hang | the FIFO's name is gone |
/// | journal or partial owned by another user (root only) | starts over | replaced by the store's own files |
/// | a directory where the journal, partial or lock should be | fails with `.fileSystem` before any request | the directory and its contents stay |
/// | store directory owned by another user (root only) | fails with `.fileSystem` before any request | nothing written there |
/// | temporary directory owned by another user (root only, not resumable) | fails with `.fileSystem` | nothing written there |
/// | destination is a link to a file outside (`.removePreviousFile`) | resumes | the link is replaced by the file; its target is never written |
/// | destination is a dangling link (no `.removePreviousFile`) | fails with `.fileSystem`: a file is there | the link stays |
/// | destination is a FIFO (`.removePreviousFile`) | resumes; no hang | replaced by the file |
@Suite(.serialized) struct HostileDownloadStoreTests {
    typealias Fixtures = CacheDirectoryFixtures
    typealias Store = DownloadStoreFixtures

    enum Plant: String, Sendable, CaseIterable, CustomTestStringConvertible {
        case partLinkedOutside, partHardLinkedOutside, journalLinkedOutside, journalTemporaryLinkedOutside, lockDanglingLink
        case journalFIFO, journalTemporaryFIFO, lockFIFO, partFIFO
        case partOwnedByAnother, journalOwnedByAnother
        case directoryForJournal, directoryForPart, directoryForLock
        case storeOwnedByAnother, temporaryDirectoryOwnedByAnother
        case destinationLinkedOutside, destinationDanglingLink, destinationFIFO

        var testDescription: String { rawValue }

        var needsRoot: Bool {
            [.partOwnedByAnother, .journalOwnedByAnother, .storeOwnedByAnother, .temporaryDirectoryOwnedByAnother].contains(self)
        }

        enum Expected: Equatable {
            /// Continues the partial (`Range` from its end) and delivers the whole resource.
            case resumes
            /// Asks for the whole resource (no `Range`) and delivers it.
            case startsOver
            /// Fails with `.fileSystem`; `beforeRequest`: without sending anything.
            case fails(beforeRequest: Bool)
        }

        var expected: Expected {
            switch self {
            case .partLinkedOutside, .partHardLinkedOutside, .journalLinkedOutside, .journalFIFO, .partFIFO, .partOwnedByAnother,
                .journalOwnedByAnother:
                .startsOver
            case .journalTemporaryLinkedOutside, .lockDanglingLink, .journalTemporaryFIFO, .lockFIFO, .destinationLinkedOutside,
                .destinationFIFO:
                .resumes
            case .directoryForJournal, .directoryForPart, .directoryForLock, .storeOwnedByAnother:
                .fails(beforeRequest: true)
            case .temporaryDirectoryOwnedByAnother, .destinationDanglingLink:
                .fails(beforeRequest: false)
            }
        }
    }

    static let total: Int64 = 300_000
    static let count = 100_000

    @Test(arguments: TransportUnderTest.available, Plant.allCases)
    func downloadStoreCase(transport: TransportUnderTest, plant: Plant) async throws {
        if plant.needsRoot, !Fixtures.canChown { return }
        let directory = makeTemporaryDirectory("hostile-store-\(plant.rawValue)")
        let output = makeTemporaryDirectory("hostile-store-output")
        let temporaryDirectory = makeTemporaryDirectory("hostile-store-temporary")
        let victim = try Fixtures.Victim.make(plant.rawValue)
        defer {
            for url in [directory, output, temporaryDirectory] { try? FileManager.default.removeItem(at: url) }
            victim.remove()
        }
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try await withServer { server async throws in
            server.route("/file", Resource(pattern: Self.total, seed: Store.seed, etag: Store.etag))
            let url = server.url("/file")
            let paths = try Store.plantPartial(in: directory, url: url, count: Self.count, total: Self.total)
            let destination = output.appendingPathComponent("file.bin")
            let outsideCopy = victim.url.deletingLastPathComponent().appendingPathComponent("copy")
            let dangling = victim.url.deletingLastPathComponent().appendingPathComponent("made-by-courier")
            var planted: URL?
            switch plant {
            case .partLinkedOutside: try Fixtures.replaceWithLink(paths.part, to: victim.url)
            case .partHardLinkedOutside:
                // The temporary directory spans file systems here: nothing to test.
                guard try Store.replaceWithHardLink(paths.part, to: victim.url) else { return }
            case .journalLinkedOutside:
                try FileManager.default.copyItem(at: paths.journal, to: outsideCopy)
                try Fixtures.replaceWithLink(paths.journal, to: outsideCopy)
            case .journalTemporaryLinkedOutside: try Fixtures.replaceWithLink(DownloadJournal.temporaryURL(for: paths.journal), to: victim.url)
            case .lockDanglingLink: try Fixtures.replaceWithLink(paths.lock, to: dangling)
            case .journalFIFO: try Fixtures.replaceWithFIFO(paths.journal)
            case .journalTemporaryFIFO: try Fixtures.replaceWithFIFO(DownloadJournal.temporaryURL(for: paths.journal))
            case .lockFIFO: try Fixtures.replaceWithFIFO(paths.lock)
            case .partFIFO: try Fixtures.replaceWithFIFO(paths.part)
            case .partOwnedByAnother: try Fixtures.giveAway(paths.part)
            case .journalOwnedByAnother: try Fixtures.giveAway(paths.journal)
            case .directoryForJournal: planted = paths.journal
            case .directoryForPart: planted = paths.part
            case .directoryForLock: planted = paths.lock
            case .storeOwnedByAnother: try Fixtures.giveAway(directory)
            case .temporaryDirectoryOwnedByAnother:
                try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
                try Fixtures.giveAway(temporaryDirectory)
            case .destinationLinkedOutside: try Fixtures.replaceWithLink(destination, to: victim.url)
            case .destinationDanglingLink: try Fixtures.replaceWithLink(destination, to: dangling)
            case .destinationFIFO: try Fixtures.replaceWithFIFO(destination)
            }
            if let planted {
                try Fixtures.replaceWithDirectory(planted)
                try Data("mine".utf8).write(to: planted.appendingPathComponent("keep.txt"))
            }
            let copied = try? Data(contentsOf: outsideCopy)
            let storeNames = Store.names(in: directory)

            var configuration = appConfiguration(transport)
            configuration.temporaryDirectory = temporaryDirectory
            let session = Session(configuration: configuration, downloadStore: DownloadStore(directory: directory), callbackQueue: testCallbackQueue)
            let options: DownloadOptions = plant == .destinationDanglingLink ? [] : [.removePreviousFile]
            let resumable = plant != .temporaryDirectoryOwnedByAnother
            let release: @Sendable () -> Void = {
                Fixtures.releaseFIFOReaders(in: directory)
                Fixtures.releaseFIFOReaders(in: output)
            }
            let response = await Fixtures.awaitWithWatchdog("the download with \(plant)", release: release) {
                await session.download(url, to: .file(destination, options: options), resumable: resumable)
                    .serializingDownloadedFileURL().response
            }
            let ranges = server.recordedRequests.map { $0.headers["Range"] }

            switch plant.expected {
            case .resumes, .startsOver:
                let file = try #require(response?.value, "\(response?.error.map { "\($0)" } ?? "no response")")
                #expect(file == destination)
                #expect((try? Data(contentsOf: file)) == PatternBody.data(offset: 0, count: Int(Self.total), seed: Store.seed))
                #expect(Fixtures.kind(destination) == S_IFREG, "the destination is the downloaded file itself")
                if plant.expected == .resumes {
                    #expect(ranges == ["bytes=\(Self.count)-"], "the partial was continued")
                } else {
                    #expect(ranges == [nil], "the partial was not the store's: the download started over")
                }
                #expect(Store.names(in: directory).isEmpty, "a finished download leaves nothing in the store: \(Store.names(in: directory))")
            case .fails(let beforeRequest):
                #expect(response?.error?.kind == .fileSystem, "\(response?.error.map { "\($0)" } ?? "succeeded")")
                if beforeRequest { #expect(ranges.isEmpty, "nothing was sent") }
            }
            #expect(victim.isIntact, "the file outside the store was written")
            if let copied { #expect((try? Data(contentsOf: outsideCopy)) == copied) }
            switch plant {
            case .lockDanglingLink:
                #expect(Fixtures.kind(dangling) == nil, "a file appeared where the link points")
            case .destinationDanglingLink:
                #expect(Fixtures.kind(dangling) == nil, "a file appeared where the link points")
                #expect(Fixtures.kind(destination) == S_IFLNK, "the link stays")
            case .directoryForJournal, .directoryForPart, .directoryForLock:
                let kept = try #require(planted).appendingPathComponent("keep.txt")
                #expect(response?.error?.message.contains("directory") == true, "\(response?.error?.message ?? "")")
                #expect((try? Data(contentsOf: kept)) == Data("mine".utf8), "the directory stays, with what it holds")
            case .storeOwnedByAnother:
                #expect(Store.names(in: directory) == storeNames, "nothing written or removed there")
            case .temporaryDirectoryOwnedByAnother:
                #expect(Store.names(in: temporaryDirectory).isEmpty, "nothing written there")
                #expect(Fixtures.kind(destination) == nil)
            default:
                break
            }
        }
    }
}
