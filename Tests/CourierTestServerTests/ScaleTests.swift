import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

extension CourierTestServerTests {
    @Suite struct Scale {
        @Test func twoHundredConcurrentConnectionsOfTwentyRequestsEachAreByteExact() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            // Every request names its own seed and size, so each body is distinct and checkable.
            server.dispatcher = { request in
                let seed = UInt64(request.query["seed"] ?? "") ?? 0
                let size = Int64(request.query["size"] ?? "") ?? 0
                return MockResponse(body: .pattern(count: size, seed: seed))
            }
            let port = server.port
            let connections = 200
            let requestsPerConnection = 20
            let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                for connection in 0..<connections {
                    group.addTask {
                        try await onThread {
                            // Byte exactness, not latency: 200 blocking clients under ThreadSanitizer on
                            // two cores have waited more than the default 10 s for an answer.
                            let client = try RawClient(port: port, receiveTimeout: .seconds(90))
                            var failures = 0
                            for request in 0..<requestsPerConnection {
                                let seed = connection * 1000 + request
                                let size = 1 + (connection * 7919 + request * 104_729) % 40_000
                                let response = try client.get("/c?seed=\(seed)&size=\(size)")
                                if response.status != 200 || response.body.count != size
                                    || !matchesPattern(response.body, offset: 0, seed: UInt64(seed))
                                {
                                    failures += 1
                                }
                            }
                            return failures
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(failures == 0)
            #expect(server.requestCount == connections * requestsPerConnection)
            #expect(server.connectionCount == connections)
            let byConnection = Dictionary(grouping: server.recordedRequests, by: \.connectionIndex)
            #expect(byConnection.count == connections)
            #expect(byConnection.values.allSatisfy { $0.map(\.exchangeIndex) == Array(0..<requestsPerConnection) })
        }

        #if os(Linux)
        @Test func startingAndStoppingFiveHundredServersLeaksNoDescriptorsOrThreads() throws {
            let label = "ctsleak"
            var configuration = TestServer.Configuration()
            configuration.threadName = label
            func cycle(_ index: Int) throws -> Int {
                let server = try TestServer(configuration: configuration)
                server.enqueue(.ok("x"))
                let client = try RawClient(port: server.port)
                _ = try client.get("/")
                // Half the servers are stopped with the client still connected, half after it left.
                if index.isMultiple(of: 2) {
                    expectClean(server.shutdown())
                    withExtendedLifetime(client) {}
                } else {
                    withExtendedLifetime(client) {}
                    expectClean(server.shutdown())
                }
                return server.port
            }
            // Warm up anything the runtime creates lazily on first use.
            for index in 0..<3 { _ = try cycle(index) }
            let descriptorsBefore = ProcessResources.descriptorCount()
            let threadsBefore = ProcessResources.threadCount()

            var ports: Set<Int> = []
            var sawServerThreads = false
            for index in 0..<500 {
                if index == 250 {
                    let server = try TestServer(configuration: configuration)
                    // The thread names itself once it runs, which a loaded (or a quiet) machine may
                    // not have let it do yet: wait for it, with a margin only a hang exceeds.
                    sawServerThreads = ProcessResources.waitForThreads(named: label, toNumber: 1)
                    expectClean(server.shutdown())
                }
                ports.insert(try cycle(index))
            }

            let descriptorsAfter = ProcessResources.descriptorCount()
            let threadsAfter = ProcessResources.threadCount()
            // The counting method sees the server's threads while one runs…
            #expect(sawServerThreads)
            // …and none of them, nor any socket on the servers' ports, survives shutdown. `shutdown()`
            // joins every thread, but the kernel clears a thread's id (which `pthread_join` waits for)
            // before it removes the thread from /proc/self/task: an exited thread may still be listed
            // for a moment, so wait for the listing, with a margin only a thread that never ends exceeds.
            #expect(ProcessResources.waitForThreads(named: label, toNumber: 0))
            #expect(ProcessResources.openTCPSockets(touching: ports) == 0)
            // The process's totals are this test's own only with it alone (`COURIER_RESOURCE_TESTS=1`,
            // a step of `.ci/run`): beside it other suites open descriptors and start threads. The
            // server threads and sockets are counted exactly above, wherever it runs; a leak of one
            // descriptor or thread per server would show up as 500 or more.
            if TestEnvironment.measuresAlone() {
                #expect(descriptorsAfter - descriptorsBefore < 100, "descriptors \(descriptorsBefore) → \(descriptorsAfter)")
                #expect(threadsAfter - threadsBefore < 100, "threads \(threadsBefore) → \(threadsAfter)")
            }
        }
        #endif
    }
}

#if os(Linux)
/// Counts of this process's descriptors and threads, read from /proc.
enum ProcessResources {
    static func descriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    /// Threads whose name starts with `prefix`.
    static func threadCount(named prefix: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix(prefix)
        }.count
    }

    /// Waits until exactly `count` threads are named with `prefix`, polling /proc with a 60 s margin
    /// only a hang exceeds; whether the count was reached.
    static func waitForThreads(named prefix: String, toNumber count: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while threadCount(named: prefix) != count, ContinuousClock.now < deadline { usleep(1_000) }
        return threadCount(named: prefix) == count
    }

    /// How many of this process's open TCP sockets have a local or remote port in `ports`.
    static func openTCPSockets(touching ports: Set<Int>) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let inodes = Set(
            descriptors.compactMap { fd -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9, inodes.contains(String(fields[9])) else { return false }
            let port: (Substring) -> Int? = { address in address.split(separator: ":").last.flatMap { Int($0, radix: 16) } }
            return [fields[1], fields[2]].compactMap(port).contains { ports.contains($0) }
        }.count
    }
}
#endif
