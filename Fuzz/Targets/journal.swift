// Fuzz target: the download journal reader (DownloadJournal.load) and writer (save).
//
// Properties: loading arbitrary bytes never traps; a loaded journal has the current version and
// a non-negative durable length; saving it and loading it again gives an equal journal.
import Foundation
@testable import Courier

private let directory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-journal-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit {
        try? FileManager.default.removeItem(at: FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-journal-\(getpid())"))
    }
    return url
}()
private let input = directory.appendingPathComponent("input.journal")
private let output = directory.appendingPathComponent("output.journal")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    do { try data.write(to: input) } catch { preconditionFailure("cannot write \(input.path): \(error)") }
    guard let journal = DownloadJournal.load(from: input) else { return 0 }
    precondition(journal.version == DownloadJournal.currentVersion, "loaded version \(journal.version)")
    precondition(journal.durableLength >= 0, "negative durable length \(journal.durableLength)")
    precondition(journal.validator == (journal.etag ?? journal.lastModified))
    do { try journal.save(to: output) } catch { preconditionFailure("cannot save a loaded journal: \(error)") }
    guard let again = DownloadJournal.load(from: output) else {
        preconditionFailure("a saved journal does not load: \(String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self))")
    }
    precondition(again == journal, "save/load changed the journal:\n\(journal)\n\(again)")
    return 0
}
