import Testing
import CourierTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Issue 23's resource hygiene: requests that end in every kind of failure leave the process's
/// descriptor and thread counts where they were. Process-wide figures, so this runs only alone
/// (`.ci/run` runs it with `COURIER_RESOURCE_TESTS=1`, next to the deduplication check).
@Suite struct ResourceHygieneTests {
    /// One way for a request to fail, and the kind it must fail with.
    enum Failure: CaseIterable {
        case refused, reset, timeout, notHTTP, conflictingLength, tooLarge, cancelled, validation, truncated, invalidRequest

        var kind: CourierError.Kind {
            switch self {
            case .refused: .cannotConnect
            case .reset, .truncated: .connectionLost
            case .timeout: .timedOut
            case .notHTTP, .conflictingLength: .invalidResponse
            case .tooLarge: .responseTooLarge
            case .cancelled: .cancelled
            case .validation: .validationFailed
            case .invalidRequest: .invalidRequest
            }
        }
    }

    /// Where each failure is served.
    struct Servers {
        let refused: URL
        let notHTTP: ScriptedReplyServer
        let conflictingLength: ScriptedReplyServer
    }

    /// Sends one request that fails as `failure` says; returns the kind it failed with (`nil`: it succeeded).
    static func fail(_ failure: Failure, on session: Session, servers: Servers) async -> CourierError.Kind? {
        switch failure {
        case .refused:
            return await session.request(servers.refused).serializingData().response.error?.kind
        case .reset:
            return await session.request("reset").serializingData().response.error?.kind
        case .timeout:
            return await session.request("stall", timeout: 0.05).serializingData().response.error?.kind
        case .notHTTP:
            return await session.request(servers.notHTTP.url).serializingData().response.error?.kind
        case .conflictingLength:
            return await session.request(servers.conflictingLength.url).serializingData().response.error?.kind
        case .tooLarge:
            return await session.request("large").maximumResponseSize(1024).serializingData().response.error?.kind
        case .cancelled:
            let request = session.request("stall")
            let task = request.serializingData()
            task.resume()
            request.cancel()
            return await task.response.error?.kind
        case .validation:
            return await session.request("error").validate().serializingData().response.error?.kind
        case .truncated:
            return await session.request("truncated").serializingData().response.error?.kind
        case .invalidRequest:
            return await session.request("large", headers: ["X-Injected": "a\r\nInjected: 1"]).serializingData().response.error?.kind
        }
    }

    /// Runs `count` failures, cycling through every kind, `width` at a time; returns the ones
    /// that did not fail as expected, by failure and outcome.
    static func run(_ count: Int, width: Int, on session: Session, servers: Servers) async -> [String: Int] {
        let failures = Failure.allCases
        return await withTaskGroup(of: String?.self) { group in
            var mismatches: [String: Int] = [:]
            var next = 0
            func add() {
                let failure = failures[next % failures.count]
                next += 1
                group.addTask {
                    let kind = await fail(failure, on: session, servers: servers)
                    return kind == failure.kind ? nil : "\(failure) → \(kind.map { "\($0)" } ?? "success")"
                }
            }
            while next < min(width, count) { add() }
            for await mismatch in group {
                if let mismatch { mismatches[mismatch, default: 0] += 1 }
                if next < count { add() }
            }
            return mismatches
        }
    }

    static func routes(on server: TestServer) {
        server.route("/reset") { _ in MockResponse.ok("reset").effect(.reset, at: .afterRequest) }
        server.route("/stall") { _ in MockResponse.ok(Data(count: 1_000)).effect(.stall, at: .responseStart) }
        server.route("/large") { _ in MockResponse.ok(Data(count: 4_096)) }
        server.route("/error") { _ in MockResponse.text("broken", status: 500) }
        server.route("/truncated") { _ in MockResponse.ok(Data(count: 4_096)).truncated(afterBytes: 1_000) }
    }

    /// Threads this process runs.
    static func threads() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    /// What each open descriptor is (`socket:[1234]`, a path, `anon_inode:[eventfd]`), by number.
    static func descriptorTable() -> [String: String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var table: [String: String] = [:]
        for name in names {
            table[name] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "?"
        }
        return table
    }

    /// Open descriptors: anonymous inodes (eventfd, epoll, timerfd) and all others (sockets, files, pipes).
    static func descriptorCounts() -> (anonymous: Int, other: Int) {
        let targets = descriptorTable().values
        let anonymous = targets.filter { $0.hasPrefix("anon_inode:") }.count
        return (anonymous, targets.count - anonymous)
    }

    /// The descriptors open now that were not in `earlier`, for a failure message.
    static func newDescriptors(since earlier: [String: String]) -> String {
        let sockets = SocketCensus.read("/proc/net/tcp")?.split(separator: "\n") ?? []
        return descriptorTable().filter { earlier[$0.key] != $0.value }.map { number, target in
            // For a TCP socket, its line in /proc/net/tcp: local and remote address (hex), state.
            let inode = target.hasPrefix("socket:[") ? String(target.dropFirst(8).dropLast()) : ""
            let line = sockets.first { $0.split(separator: " ").count > 9 && $0.split(separator: " ")[9] == inode }
            let detail = line.map { " (\($0.split(separator: " ")[1...3].joined(separator: " ")))" } ?? ""
            return "\(number) → \(target)\(detail)"
        }.sorted().joined(separator: ", ")
    }

    /// 10,000 failing requests on each transport, 16 at a time, cycling through ten kinds of
    /// failure (refused, reset, timeout, not HTTP, conflicting Content-Length, over the size
    /// limit, cancelled, validation, cut short, invalid request), each checked for its kind.
    ///
    /// A warm-up round on a session of each transport, dropped, lets the transports and the
    /// runtime open what they open once per process (FoundationNetworking keeps two sockets after
    /// its first session) and start their threads. The baseline is taken once no connection to
    /// the servers is left; after each transport's 10,000 failures, with its session dropped,
    /// sockets, files and pipes must come back to it exactly, anonymous descriptors (eventfd,
    /// epoll: Dispatch opens one now and then) and threads within a small slack for the runtime.
    @Test(.enabled(if: ResourceMeasurement.isolated, ResourceMeasurement.skipMessage))
    func descriptorsAndThreadsStayFlatAcrossFailures() async throws {
        let width = 16
        let count = 10_000
        let refused = try closedPort()
        try await withServer { server async throws in
            Self.routes(on: server)
            let notHTTP = try ScriptedReplyServer(reply: Data("this is not HTTP at all\r\n\r\n".utf8))
            let conflicting = try ScriptedReplyServer(reply: Data("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!".utf8))
            defer {
                notHTTP.stop()
                conflicting.stop()
            }
            let servers = Servers(
                refused: URL(string: "http://127.0.0.1:\(refused)/refused") ?? server.baseURL,
                notHTTP: notHTTP, conflictingLength: conflicting)
            let ports = [server.baseURL.port ?? 0, notHTTP.port, conflicting.port]
            /// Whether every connection to the servers is closed (sessions close theirs when dropped).
            func connectionsClosed() async -> Bool {
                await eventually(timeout: .seconds(60)) { ports.allSatisfy { SocketCensus.connections(toPort: $0) == 0 } }
            }

            for transport in TransportUnderTest.available {
                let warmUp = makeSession(transport, server: server) {
                    $0.requestTimeout = 10
                    $0.transportClock = .system
                }
                let mismatches = await Self.run(Failure.allCases.count * width * 2, width: width, on: warmUp, servers: servers)
                #expect(mismatches.isEmpty, "\(transport) warm-up: \(mismatches)")
            }
            #expect(await connectionsClosed(), "the warm-up sessions left connections open")
            let descriptors = ResourceMeasurement.openDescriptors()
            let baseline = Self.descriptorCounts()
            let table = Self.descriptorTable()
            let threads = Self.threads()

            for transport in TransportUnderTest.available {
                let started = ContinuousClock.now
                do {
                    let session = makeSession(transport, server: server) {
                        $0.requestTimeout = 10
                        $0.transportClock = .system
                    }
                    let mismatches = await Self.run(count, width: width, on: session, servers: servers)
                    #expect(mismatches.isEmpty, "\(transport): \(mismatches)")
                    TestEnvironment.note(
                        "\(transport): \(count) failures in \(ContinuousClock.now - started); with the session alive: "
                            + "descriptors \(descriptors) → \(ResourceMeasurement.openDescriptors()), threads \(threads) → \(Self.threads())")
                }
                #expect(await connectionsClosed(), "\(transport) left connections open")
                // Sockets and files exactly; the runtime (Dispatch) may open an eventfd or epoll
                // descriptor of its own on a busy moment, which a leak per request would dwarf.
                #expect(
                    await eventually(timeout: .seconds(60)) {
                        let now = Self.descriptorCounts()
                        return now.other <= baseline.other && now.anonymous <= baseline.anonymous + 2
                    },
                    "\(transport) left descriptors open: \(Self.newDescriptors(since: table))")
                // The runtime's worker pool may grow or shrink by a few threads between two quiet moments.
                #expect(
                    await eventually(timeout: .seconds(60)) { Self.threads() <= threads + 4 },
                    "\(transport) threads: \(threads) after the warm-up, \(Self.threads()) now")
            }
        }
    }
}
