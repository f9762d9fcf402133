// Fuzz target: the curl transport's content decoding (CurlContentDecoding over CCurl's zlib,
// brotli and zstd decoders) on hostile bodies, fed in odd pieces into odd amounts of room.
//
// Input: byte 0 picks the Content-Encoding, byte 1 the piece and room sizes, the rest is the body.
// Properties: nothing traps; a call never produces more than the room it was given nor takes
// more than the piece it was offered; a call that leaves room unused has taken the whole piece
// (so the transport can accept the chunk); a body whose codings ended takes nothing more (but a
// zstd body may go on with another frame).
import Foundation
@testable import Courier

private let codings = ["gzip", "deflate", "br", "zstd", "x-gzip", "gzip, gzip", "deflate, zstd", "br, gzip",
                       "identity, gzip", "zstd, zstd", "compress", "gzip, gzip, gzip, gzip, gzip, gzip"]
/// Decoded bytes after which one input stops (bombs are expected; the properties hold long before).
private let decodedLimit = 4 << 20

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count >= 2 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let coding = codings[Int(bytes[0]) % codings.count]
    let shape = Int(bytes[1])
    let body = UnsafeRawBufferPointer(rebasing: bytes[2...])
    let decoding: CurlContentDecoding
    do throws(CurlContentDecoding.Failure) {
        guard let made = try CurlContentDecoding.make(contentEncoding: coding) else { return 0 }
        decoding = made
    } catch {
        return 0
    }
    let pieceSize = [1, 7, 512, 16_384, Int.max][shape % 5]
    let roomSize = [1, 3, 1000, 65_536][(shape / 5) % 4]
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: roomSize, alignment: 1)
    defer { output.deallocate() }
    var offset = 0
    var decoded = 0
    var ended = false
    while offset < body.count || offset == 0 {
        let end = min(body.count, offset + min(pieceSize, body.count - offset))
        var wire = UnsafeRawBufferPointer(rebasing: body[offset..<end])
        let offered = wire.count
        while true {
            let before = wire.count
            let produced: Int
            do throws(CurlContentDecoding.Failure) {
                produced = try decoding.decode(&wire, into: output)
            } catch {
                return 0
            }
            precondition(produced >= 0 && produced <= output.count, "produced \(produced) into \(output.count)")
            precondition(wire.count <= before, "the piece grew")
            if ended, !coding.contains("zstd") { precondition(produced == 0 && (before == 0 || wire.count == before), "data taken after the end") }
            decoded += produced
            if decoded > decodedLimit { return 0 }
            if produced < output.count {
                precondition(wire.isEmpty, "room left with \(wire.count) of \(offered) bytes not taken")
                break
            }
        }
        if decoding.isComplete { ended = true }
        offset = end
        if body.isEmpty { break }
    }
    return 0
}
