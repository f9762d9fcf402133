import Foundation
import Testing

@testable import Courier

/// A session hands out the objects it was composed of, the same one at every access, and they are
/// the ones its requests go through: Core keeps them as `SessionParts`, the features' own layers
/// hand them out (Features/Session+Features.swift, Requests/DownloadStore/Session+DownloadStore.swift).
@Suite struct SessionCompositionTests {
    @Test func theSessionHandsOutWhatItWasMadeWith() throws {
        let store = DownloadStore(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("courier-composition-\(UUID().uuidString)"))
        let cache = ResponseCache()
        let servers = ServerPool([try #require(URL(string: "http://127.0.0.1:9/v1/"))])
        let session = Session(servers: servers, deduplication: .safeMethods, downloadStore: store, responseCache: cache)
        #expect(session.downloadStore === store)
        #expect(session.responseCache === cache)
        #expect(session.serverPool === servers)
        #expect(session.deduplicator === session.deduplicator)
        #expect(session.deduplicator.policy == .safeMethods)
        // The pool's current server is where relative paths go.
        #expect(session.resolvedWithoutChecks(try #require(URL(string: "users/42")))?.absoluteString == "http://127.0.0.1:9/v1/users/42")

        let plain = Session(configuration: .testing, baseURL: URL(string: "http://127.0.0.1:9/v2/"))
        #expect(plain.serverPool == nil)
        #expect(plain.deduplicator.policy == .disabled)
        #expect(plain.resolvedWithoutChecks(try #require(URL(string: "users/42")))?.absoluteString == "http://127.0.0.1:9/v2/users/42")
    }

    @Test func aPartNobodySetIsMadeOnceAndKept() {
        let parts = SessionParts()
        var made = 0
        let first = parts.part(ResponseCache.self) {
            made += 1
            return ResponseCache()
        }
        let second = parts.part(ResponseCache.self) {
            made += 1
            return ResponseCache()
        }
        #expect(first === second)
        #expect(made == 1)
        #expect(parts.part(ServerPool.self) == nil)
        let cache = ResponseCache()
        #expect(SessionParts([cache]).part(ResponseCache.self) === cache)
    }
}
