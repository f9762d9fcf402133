// Counts the heap allocations (malloc, calloc, realloc, posix_memalign, … calls) a block of client
// requests makes, with ordo-one's malloc-interposer: process-wide, every thread, exact. The bench-alloc-*
// executables run under `LD_PRELOAD=libMallocInterposerSwift.so` (allocations.py sets it), so that
// every library's allocations, libcurl's and Foundation's included, go through the counter.
import Foundation
import MallocInterposerSwift

/// The command line of the bench-alloc-* executables:
/// `<seq|conc> --url URL [--n N] [--c C] [--warmup W] [--cacert PEM] [--http auto|1.1|2]`.
public struct AllocationArguments: Sendable {
    /// `seq`: one request at a time; `conc`: `c` at a time.
    public var workload = "seq"
    public var url = ""
    /// Counted requests.
    public var n = 2_000
    /// In flight at once (`conc`).
    public var c = 32
    /// Requests made before counting starts, so that connection set-up and first-use caches are not counted.
    public var warmup = 200
    /// The CA certificate (PEM) for https URLs.
    public var cacert = ""
    public var http = "auto"

    public init(_ argv: [String] = CommandLine.arguments) {
        var iterator = argv.dropFirst().makeIterator()
        if let first = iterator.next() { workload = first }
        while let key = iterator.next(), let value = iterator.next() {
            switch key {
            case "--url": url = value
            case "--n": n = Int(value) ?? n
            case "--c": c = Int(value) ?? c
            case "--warmup": warmup = Int(value) ?? warmup
            case "--cacert": cacert = value
            case "--http": http = value
            default: break
            }
        }
        if workload == "seq" { c = 1 }
    }
}

/// Runs `warmup` uncounted requests, then `n` counted ones, `c` at a time, and prints one JSON line:
/// the allocations and frees per request. `request` returns the body's size, or throws.
public func countAllocations(
    client: String,
    _ arguments: AllocationArguments,
    request: @escaping @Sendable () async throws -> Int
) async {
    @Sendable func run(_ total: Int) async -> Int {
        await withTaskGroup(of: Int.self) { group in
            for worker in 0..<arguments.c {
                let share = total / arguments.c + (worker < total % arguments.c ? 1 : 0)
                group.addTask {
                    var errors = 0
                    for _ in 0..<share {
                        do { _ = try await request() } catch { errors += 1 }
                    }
                    return errors
                }
            }
            return await group.reduce(0, +)
        }
    }
    var errors = await run(arguments.warmup)
    MallocInterposerSwift.reset()
    MallocInterposerSwift.hook()
    errors += await run(arguments.n)
    MallocInterposerSwift.unhook()
    let statistics = MallocInterposerSwift.getStatistics()
    let perRequest = Double(statistics.mallocCount) / Double(arguments.n)
    let freesPerRequest = Double(statistics.freeCount) / Double(arguments.n)
    let bytesPerRequest = Double(statistics.mallocBytesCount) / Double(arguments.n)
    print(
        #"{"client":"\#(client)","workload":"\#(arguments.workload)","http":"\#(arguments.http)","n":\#(arguments.n),"c":\#(arguments.c),"#
            + #""warmup":\#(arguments.warmup),"errors":\#(errors),"mallocs":\#(statistics.mallocCount),"#
            + #""mallocs_per_request":\#(perRequest),"frees_per_request":\#(freesPerRequest),"bytes_per_request":\#(bytesPerRequest)}"#
    )
    if statistics.mallocCount == 0 {
        FileHandle.standardError.write(Data("no allocation counted: run under LD_PRELOAD=libMallocInterposerSwift.so\n".utf8))
        exit(2)
    }
    if errors > 0 { exit(1) }
}
