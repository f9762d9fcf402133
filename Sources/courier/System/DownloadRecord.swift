import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `-C -` notes on a file it completed, so that a later `-C -` can prove the file is the
/// version a server still has: the validator the server gave (a strong `ETag`, else
/// `Last-Modified`), with the file's size and modification time then. Kept in an extended
/// attribute of the file (`user.courier.validator`); a file system without them keeps nothing,
/// and the file's modification time (the server's `Last-Modified`, see ``FileMode``) is the proof
/// left.
///
/// The record counts only while the file has the size and modification time it noted: a file
/// changed since proves nothing.
enum DownloadRecord {
    /// The extended attribute's name.
    static let attribute = "user.courier.validator"
    /// The most bytes of the attribute read (a validator is short; anything longer is not ours).
    static let maximumLength = 1024

    /// Notes `validator` on the file at `path` as it is now.
    static func write(validator: String, to path: String) {
        guard let setAttribute = XattrFunctions.set, let (size, modified) = sizeAndTime(path) else { return }
        let text = "\(validator)\n\(size)\n\(modified)"
        _ = text.withCString { value in setAttribute(path, attribute, value, strlen(value), 0) }
    }

    /// The validator noted on the file at `path`, if the file has not changed since.
    static func validator(for path: String) -> String? {
        guard let getAttribute = XattrFunctions.get else { return nil }
        var buffer = [UInt8](repeating: 0, count: maximumLength)
        let count = buffer.withUnsafeMutableBytes { getAttribute(path, attribute, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let lines = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 3, let (size, modified) = sizeAndTime(path), lines[1] == "\(size)", lines[2] == "\(modified)",
            !lines[0].isEmpty, !lines[0].contains("\r")
        else { return nil }
        return String(lines[0])
    }

    /// The validator of a response worth noting: a strong `ETag`, else `Last-Modified`.
    static func validator(of response: HTTPURLResponse) -> String? {
        if let etag = response.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces), etag.hasPrefix("\"") {
            return etag
        }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }

    /// The size and the modification time (whole seconds) of a regular file.
    private static func sizeAndTime(_ path: String) -> (Int64, Int64)? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec))
    }
}

/// `setxattr` and `getxattr` (Linux), looked up in the C library at run time: the Glibc module
/// does not export `<sys/xattr.h>`. Nil elsewhere, and where the C library lacks them.
private enum XattrFunctions {
    typealias Set = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
    typealias Get = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int

    #if os(Linux)
    static let set: Set? = symbol("setxattr").map { unsafeBitCast($0, to: Set.self) }
    static let get: Get? = symbol("getxattr").map { unsafeBitCast($0, to: Get.self) }

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        guard let process = dlopen(nil, RTLD_NOW) else { return nil }
        return dlsym(process, name)
    }
    #else
    static let set: Set? = nil
    static let get: Get? = nil
    #endif
}
