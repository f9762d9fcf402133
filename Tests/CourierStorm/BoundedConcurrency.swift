/// Runs `body(0)` … `body(count - 1)` concurrently, at most `inFlight` at a time, and returns when
/// every one has ended (the storms' shape: thousands of requests, a bounded number in flight).
package func forEachConcurrently(
    _ count: Int, atMost inFlight: Int, _ body: @escaping @Sendable (Int) async -> Void
) async {
    await withTaskGroup(of: Void.self) { group in
        var running = 0
        for index in 0..<count {
            if running >= inFlight {
                await group.next()
                running -= 1
            }
            running += 1
            group.addTask { await body(index) }
        }
    }
}
