// Allocations per request of Courier's public API on its curl transport (BENCHMARKS.md,
// "Allocations per request"): `session.request(url).serializingData().value`, as bench-courier's
// A and B, counted by AllocationCounting. Run by Benchmarks/allocations.py.
import AllocationCounting
import Courier
import Foundation

let arguments = AllocationArguments()
var configuration = SessionConfiguration()
configuration.transport = .curl
configuration.maximumConnectionsPerHost = max(arguments.c, 8)
configuration.cookies = .none
configuration.automaticDecompression = false
if !arguments.cacert.isEmpty {
    configuration.tls.trustRoots = .only([URL(fileURLWithPath: arguments.cacert)])
}
switch arguments.http {
case "1.1": configuration.httpVersion = .http1_1
case "2": configuration.httpVersion = .http2
default: configuration.httpVersion = .automatic
}
let session = Session(configuration: configuration)
let url = arguments.url
await countAllocations(client: "courier", arguments) {
    try await session.request(url).validate().serializingData().value.count
}
