import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing to a file descriptor without Foundation: the disk cache's files and the `courier`
/// tool's standard streams.
package enum DescriptorIO {
    /// Writes every byte of `buffer` to `descriptor`, retrying after `EINTR` and short writes;
    /// `false` on any other failure.
    package static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = buffer.baseAddress else { return true }
        var remaining = buffer.count
        while remaining > 0 {
            let written = write(descriptor, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            remaining -= written
            pointer += written
        }
        return true
    }
}
