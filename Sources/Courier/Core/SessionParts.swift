import Foundation
import CourierLocking

/// What a session keeps for the layers above Core (the download store of the request kinds, the
/// routed features' objects), keyed by type: the session carries them without naming them, and
/// each layer reads its own through an extension of `Session` in its own folder
/// (`Requests/DownloadStore/Session+DownloadStore.swift`, `Features/Session+Features.swift`).
///
/// The initialiser that composes a session sets every part; a part nobody set (a session made by
/// Core's own initialiser, in a test) is made on first use and kept, so a session always hands out
/// the same object.
final class SessionParts: Sendable {
    /// The parts by the `ObjectIdentifier` of their type.
    private let values: Locked<[ObjectIdentifier: any Sendable]>

    init() {
        values = Locked([:])
    }

    /// A session part of each of `parts`' types.
    init(_ parts: [any Sendable]) {
        var values: [ObjectIdentifier: any Sendable] = [:]
        for part in parts { values[ObjectIdentifier(type(of: part))] = part }
        self.values = Locked(values)
    }

    /// The part of type `Part`, made by `make` (and kept) when the session has none.
    func part<Part: Sendable>(_ type: Part.Type, orMake make: () -> Part) -> Part {
        values.withLock { values in
            if let part = values[ObjectIdentifier(type)] as? Part { return part }
            let part = make()
            values[ObjectIdentifier(type)] = part
            return part
        }
    }

    /// The part of type `Part`, `nil` when the session has none.
    func part<Part: Sendable>(_ type: Part.Type) -> Part? {
        values.withLock { $0[ObjectIdentifier(type)] as? Part }
    }
}

/// Where a session's relative paths resolve instead of its fixed base URL (a server pool's
/// current server), so that Core resolves them without naming the feature.
protocol SessionBaseURLSource: Sendable {
    /// The base URL relative paths resolve against now; `nil` for none.
    var currentBaseURL: URL? { get }
}
