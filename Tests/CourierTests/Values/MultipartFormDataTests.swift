import CourierTestSupport
import Foundation
import Testing
@_spi(Transport) @testable import Courier

extension Values {
    @Suite("MultipartFormData") struct MultipartFormDataTests {
        /// A fresh directory for one test; `body` runs with it and it is removed afterwards.
        private func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-values-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            return try body(directory)
        }

        private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

        @Test("the encoding follows RFC 7578 byte for byte")
        func exactEncoding() throws {
            let form = MultipartFormData(boundary: "B")
            form.append(Data("bob".utf8), withName: "name")
            form.append("x y", withName: "t")
            form.append(Data("JPG".utf8), withName: "f", fileName: "a.jpg")
            form.append(Data("{}".utf8), withName: "j", mimeType: "application/json")
            form.append(Data(), withName: "blob", fileName: "noext")
            let expected =
                "--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nbob\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"t\"\r\n\r\nx y\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nJPG\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"j\"\r\nContent-Type: application/json\r\n\r\n{}\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"noext\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n"
                + "--B--\r\n"
            let encoded = try form.encode()
            #expect(text(encoded) == expected)
            #expect(try form.contentLength == Int64(encoded.count))
            #expect(form.contentType == "multipart/form-data; boundary=B")
            #expect(form.partCount == 5)
        }

        @Test("an empty form is just the closing delimiter")
        func emptyForm() throws {
            let form = MultipartFormData(boundary: "xyz")
            #expect(text(try form.encode()) == "--xyz--\r\n")
            #expect(try form.contentLength == 9)
        }

        @Test("random boundaries look like courier.boundary.<32 hex> and differ")
        func randomBoundary() {
            let first = MultipartFormData().boundary
            let second = MultipartFormData().boundary
            #expect(first != second)
            for boundary in [first, second] {
                #expect(boundary.hasPrefix("courier.boundary."))
                let hex = boundary.dropFirst("courier.boundary.".count)
                #expect(hex.count == 32)
                #expect(hex.allSatisfy { $0.isHexDigit && !$0.isUppercase })
                #expect(MultipartFormData.isValidBoundary(boundary))
            }
        }

        @Test(
            "boundaries with separators are quoted in the Content-Type",
            arguments: [
                ("simple-boundary_1.2", "multipart/form-data; boundary=simple-boundary_1.2"),
                ("a:b", "multipart/form-data; boundary=\"a:b\""),
                ("with space", "multipart/form-data; boundary=\"with space\""),
            ])
        func contentTypeQuoting(boundary: String, expected: String) {
            #expect(MultipartFormData(boundary: boundary).contentType == expected)
        }

        @Test("invalid boundaries fail to encode", arguments: ["", String(repeating: "b", count: 71), "trailing ", "new\r\nline", "quote\"", "é"])
        func invalidBoundary(boundary: String) throws {
            let form = MultipartFormData(boundary: boundary)
            form.append("v", withName: "n")
            let error = try #require(throws: CourierError.self) { try form.encode() }
            #expect(error.kind == .encodingFailed)
            #expect(error.message.contains("boundary"))
            #expect(throws: CourierError.self) { try form.contentLength }
        }

        @Test(
            "names and file names escape quote, CR and LF and keep other UTF-8",
            arguments: [
                ("plain", "plain"), ("a\"b", "a%22b"), ("line\r\nbreak", "line%0D%0Abreak"), ("résumé 日本 😀", "résumé 日本 😀"),
                ("100%", "100%"), ("semi;colon=eq", "semi;colon=eq"),
            ])
        func escaping(raw: String, escaped: String) throws {
            let form = MultipartFormData(boundary: "B")
            form.append(Data("v".utf8), withName: raw, fileName: raw + ".txt")
            let encoded = text(try form.encode())
            #expect(encoded.contains("name=\"\(escaped)\"; filename=\"\(escaped).txt\"\r\nContent-Type: text/plain\r\n"))
        }

        @Test("a MIME type cannot inject headers")
        func mimeTypeInjection() throws {
            let form = MultipartFormData(boundary: "B")
            form.append(Data("v".utf8), withName: "n", mimeType: "text/plain\r\nX-Evil: 1")
            let encoded = text(try form.encode())
            #expect(!encoded.contains("\r\nX-Evil"))
            #expect(encoded.contains("Content-Type: text/plainX-Evil: 1\r\n"))
        }

        @Test(
            "file parts take their name and type from the file, streamed or in memory",
            arguments: [
                ("photo.PNG", "image/png"), ("data.json", "application/json"), ("archive.tar.gz", "application/gzip"),
                ("unknown.xyz", "application/octet-stream"), ("README", "application/octet-stream"),
            ])
        func fileParts(fileName: String, mimeType: String) throws {
            try withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent(fileName)
                let contents = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
                try contents.write(to: file)
                let form = MultipartFormData(boundary: "B")
                form.append("before", withName: "a")
                form.append(fileURL: file, withName: "upload")
                let header = "--B\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"\(fileName)\"\r\nContent-Type: \(mimeType)\r\n\r\n"
                let expected =
                    Data("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nbefore\r\n\(header)".utf8)
                    + contents + Data("\r\n--B--\r\n".utf8)
                #expect(try form.encode() == expected)
                #expect(try form.contentLength == Int64(expected.count))
                let output = directory.appendingPathComponent("body.out")
                try form.writeEncodedData(to: output)
                #expect(try Data(contentsOf: output) == expected)
            }
        }

        @Test("an explicit file name and MIME type win over the file's own")
        func explicitFileNameAndType() throws {
            try withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("tmp123.bin")
                try Data("img".utf8).write(to: file)
                let form = MultipartFormData(boundary: "B")
                form.append(fileURL: file, withName: "avatar", fileName: "a.jpg", mimeType: "image/jpeg")
                #expect(text(try form.encode()).contains("name=\"avatar\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nimg\r\n"))
            }
        }

        @Test("missing files, directories and non-file URLs fail as fileSystem errors naming the file")
        func badFileParts() throws {
            try withTemporaryDirectory { directory in
                let missing = directory.appendingPathComponent("missing.txt")
                let cases: [(URL, String)] = [
                    (missing, "does not exist"),
                    (directory, "is a directory"),
                    (URL(string: "https://example.com/file.txt")!, "is not a file URL"),
                ]
                for (url, reason) in cases {
                    let form = MultipartFormData()
                    form.append("ok", withName: "text")
                    form.append(fileURL: url, withName: "doc")
                    for error in [
                        try #require(throws: CourierError.self) { try form.contentLength },
                        try #require(throws: CourierError.self) { try form.encode() },
                    ] {
                        #expect(error.kind == .fileSystem)
                        #expect(error.message.contains(reason), "\(error.message)")
                        #expect(error.message.contains(url.isFileURL ? url.path : url.absoluteString))
                        #expect(error.message.contains("\"doc\""))
                    }
                    let output = directory.appendingPathComponent("out-\(UUID().uuidString)")
                    #expect(throws: CourierError.self) { try form.writeEncodedData(to: output) }
                    #expect(!FileManager.default.fileExists(atPath: output.path))
                }
            }
        }

        @Test("an unreadable file fails as a fileSystem error", .enabled(if: getuid() != 0, "root can read any file"))
        func unreadableFile() throws {
            try withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("secret.txt")
                try Data("s".utf8).write(to: file)
                try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)
                let form = MultipartFormData()
                form.append(fileURL: file, withName: "secret")
                let error = try #require(throws: CourierError.self) { try form.contentLength }
                #expect(error.kind == .fileSystem)
                #expect(error.message.contains("permission denied"))
            }
        }

        @Test("writing refuses to replace an existing file")
        func existingDestination() throws {
            try withTemporaryDirectory { directory in
                let output = directory.appendingPathComponent("exists")
                try Data("keep".utf8).write(to: output)
                let form = MultipartFormData()
                form.append("v", withName: "n")
                let error = try #require(throws: CourierError.self) { try form.writeEncodedData(to: output) }
                #expect(error.kind == .fileSystem)
                #expect(error.message.contains("already exists"))
                #expect(try Data(contentsOf: output) == Data("keep".utf8))
            }
        }

        @Test("a file that shrinks or grows while it is read fails as fileSystem", arguments: [true, false])
        func fileChangesSize(shrinks: Bool) throws {
            try withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("changing.bin")
                let size = MultipartEncoder.chunkSize + 500
                try Data(repeating: 0x61, count: size).write(to: file)
                let form = MultipartFormData(boundary: "B")
                form.append(fileURL: file, withName: "part")
                let encoder = try form.makeEncoder()
                let (fileSizes, _) = try encoder.measure()
                #expect(fileSizes == [Int64(size)])
                var changed = false
                let error = try #require(throws: CourierError.self) {
                    try encoder.emit(fileSizes: fileSizes) { (chunk: UnsafeRawBufferPointer) throws(CourierError) in
                        // Change the file once, right after its first chunk arrives.
                        guard chunk.count == MultipartEncoder.chunkSize, !changed else { return }
                        changed = true
                        let handle = try? FileHandle(forWritingTo: file)
                        if shrinks {
                            try? handle?.truncate(atOffset: UInt64(MultipartEncoder.chunkSize + 10))
                        } else {
                            _ = try? handle?.seekToEnd()
                            try? handle?.write(contentsOf: Data("more".utf8))
                        }
                        try? handle?.close()
                    }
                }
                #expect(changed)
                #expect(error.kind == .fileSystem)
                #expect(error.message.contains(shrinks ? "shrank" : "grew"))
                #expect(error.message.contains(file.path))
            }
        }

        @Test("appending from many tasks at once keeps every part")
        func concurrentAppends() async throws {
            let form = MultipartFormData(boundary: "B")
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask { form.append("value \(index)", withName: "field\(index)") }
                }
            }
            #expect(form.partCount == 100)
            let encoded = text(try form.encode())
            for index in 0..<100 { #expect(encoded.contains("name=\"field\(index)\"\r\n\r\nvalue \(index)\r\n")) }
            #expect(try form.contentLength == Int64(encoded.utf8.count))
        }

        @Test("the memory threshold is 10 MB")
        func threshold() {
            #expect(MultipartFormData.encodingMemoryThreshold == 10_000_000)
        }

        @Test("streaming a 256 MiB file part keeps memory bounded and writes exactly contentLength bytes")
        func largeFileStreams() async throws {
            try await PeakMemoryGate.shared.run {
                try withTemporaryDirectory { directory in
                    let file = directory.appendingPathComponent("big.bin")
                    let size: UInt64 = 256 << 20
                    #expect(FileManager.default.createFile(atPath: file.path, contents: Data("head".utf8)))
                    let handle = try FileHandle(forWritingTo: file)
                    try handle.truncate(atOffset: size)  // sparse: no disk blocks until written
                    try handle.close()

                    let form = MultipartFormData(boundary: "B")
                    form.append("meta", withName: "m")
                    form.append(fileURL: file, withName: "big")
                    let length = try form.contentLength
                    let output = directory.appendingPathComponent("body.out")
                    PeakMemoryGate.resetPeak()
                    let peakBefore = Self.peakResidentBytes()
                    try form.writeEncodedData(to: output)
                    let peakAfter = Self.peakResidentBytes()

                    let attributes = try FileManager.default.attributesOfItem(atPath: output.path)
                    #expect((attributes[.size] as? NSNumber)?.int64Value == length)
                    #expect(length > Int64(size))
                    let reader = try FileHandle(forReadingFrom: output)
                    defer { try? reader.close() }
                    let head = try reader.read(upToCount: 200) ?? Data()
                    #expect(text(head).contains("filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\nhead"))
                    try reader.seek(toOffset: UInt64(length) - 13)  // four zero bytes, CRLF, "--B--", CRLF
                    #expect(text(try reader.readToEnd() ?? Data()) == "\0\0\0\0\r\n--B--\r\n")
                    if let peakBefore, let peakAfter {
                        TestEnvironment.note("multipart 256 MiB stream: peak RSS grew by \((peakAfter - peakBefore) >> 20) MiB")
                        // The process's peak counts what every test running alongside touches: the gate
                        // keeps out the other big ones, not a WebSocket interop echo of 16 MiB messages
                        // (a CI run measured +139 MiB that way), nor ThreadSanitizer's shadow memory. The
                        // bound is checked with the test alone (`COURIER_RESOURCE_TESTS=1`, as `.ci/run` does).
                        if ResourceMeasurement.isolated {
                            #expect(peakAfter - peakBefore < 96 << 20)
                        }
                    }
                }
            }
        }

        /// The process's peak resident set size (VmHWM), where the platform reports it.
        static func peakResidentBytes() -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                let digits = line.filter(\.isNumber)
                return Int(digits).map { $0 * 1024 }
            }
            return nil
        }
    }
}
