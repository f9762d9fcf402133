import Foundation

/// Finds the `courier` executable that `swift build`/`swift test` built next to this test bundle.
enum CourierExecutable {
    /// The executable, or nil when it cannot be found.
    static let url: URL? = locate()

    /// Why the executable could not be found, for test failures.
    static var missingMessage: String {
        "The courier executable was not found next to the test bundle (searched upwards from "
            + "\(CommandLine.arguments.first ?? "?") and \(Bundle.main.bundleURL.path)); "
            + "build it with `swift build --product courier` using the same --scratch-path."
    }

    /// Walks up from the test bundle (the `.xctest` path in `CommandLine.arguments[0]`, then
    /// `Bundle.main`) looking for a regular, executable file named `courier` in the same build
    /// products directory.
    private static func locate() -> URL? {
        var starts: [URL] = []
        if let first = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: first).resolvingSymlinksInPath())
        }
        starts.append(Bundle.main.bundleURL.resolvingSymlinksInPath())
        for start in starts {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("courier")
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate.path)
                {
                    return candidate
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }
}
