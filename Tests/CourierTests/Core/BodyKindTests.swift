import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// The body policies of each kind of response sink, as one kind → policies table (#38: one value
/// says what kind of body a sink keeps; the policies follow from it in one place).
@Suite struct BodyKindTests {
    /// One row: the policies of a kind, in a form that compares and prints.
    private static func policies(_ kind: BodyKind) -> String {
        let limit: String
        switch kind.sizeLimitClass {
        case .memory: limit = "memoryLimit"
        case .download: limit = "downloadLimit"
        case .unlimited: limit = "noLimit"
        }
        return [
            "window=\(kind.flowControlWindow >> 20)MiB",
            kind.validatesAtHead ? "validatesAtHead" : "validatesAtEnd",
            kind.allowsSharing ? "mayShare" : "ownTransfer",
            kind.consumerSetsPace ? "consumerPaced" : "transportPaced",
            kind.allowsStoring ? "mayBeStored" : "neverStored",
            kind.expectsLargeBody ? "largeBody" : "smallBody",
            limit,
        ].joined(separator: " ")
    }

    @Test func eachKindHasItsPolicies() {
        let table = Dictionary(uniqueKeysWithValues: BodyKind.allCases.map { ($0, Self.policies($0)) })
        #expect(
            table == [
                .memory: "window=8MiB validatesAtEnd mayShare transportPaced mayBeStored smallBody memoryLimit",
                .file: "window=4MiB validatesAtEnd mayShare transportPaced mayBeStored largeBody downloadLimit",
                .resumableStore: "window=4MiB validatesAtEnd ownTransfer transportPaced neverStored largeBody downloadLimit",
                .stream: "window=1MiB validatesAtHead ownTransfer consumerPaced mayBeStored largeBody noLimit",
            ])
    }

    @Test func eachSinkSaysItsKind() {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("BodyKindTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(MemoryBodySink().kind == .memory)
        #expect(FileBodySink(destination: .temporary, temporaryDirectory: directory).kind == .file)
        let store = DownloadStore(directory: directory)
        #expect(StoreBodySink(store: store, destination: .temporary, temporaryDirectory: directory, integrity: nil).kind == .resumableStore)
        #expect(StreamBodySink(buffer: StreamBuffer()).kind == .stream)
    }

    /// Retrying is state, not kind: a stream may retry until its consumer took a byte.
    @Test func aStreamMayNoLongerRetryOnceItsConsumerTookBytes() async {
        #expect(!MemoryBodySink().hasHandedOutBytes)
        let buffer = StreamBuffer()
        let stream = StreamBodySink(buffer: buffer)
        #expect(buffer.attachConsumer())
        stream.append(Data("a".utf8), from: Transfer())
        #expect(!stream.hasHandedOutBytes)
        _ = await buffer.next()
        #expect(stream.hasHandedOutBytes)
    }

    private final class Transfer: TransportTransfer {
        func suspend() {}
        func resume() {}
        func cancel() {}
        func acknowledge(_ bytes: Int) {}
    }
}
