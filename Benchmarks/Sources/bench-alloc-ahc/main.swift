// Allocations per request of AsyncHTTPClient (BENCHMARKS.md, "Allocations per request"): `execute` +
// `body.collect(upTo:)`, configured as bench-ahc, counted by AllocationCounting. Run by
// Benchmarks/allocations.py.
import AllocationCounting
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

struct BadStatus: Error {}

let arguments = AllocationArguments()
var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(
    idleTimeout: .seconds(60),
    concurrentHTTP1ConnectionsPerHostSoftLimit: max(arguments.c, 8)
)
configuration.decompression = .disabled
if !arguments.cacert.isEmpty {
    var tls = TLSConfiguration.makeClientConfiguration()
    do { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(arguments.cacert)) } catch {
        print("cannot read \(arguments.cacert): \(error)")
        exit(2)
    }
    configuration.tlsConfiguration = tls
}
configuration.httpVersion = arguments.http == "1.1" ? .http1Only : .automatic
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
let request = HTTPClientRequest(url: arguments.url)
await countAllocations(client: "ahc", arguments) {
    let response = try await client.execute(request, timeout: .seconds(600))
    guard response.status == .ok else { throw BadStatus() }
    return try await response.body.collect(upTo: 1 << 20).readableBytes
}
try? await client.shutdown().get()
