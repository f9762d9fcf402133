/// A snapshot of how far an upload or a download has got.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes transferred so far.
    public let completedUnitCount: Int64
    /// Bytes expected in total, or `-1` when unknown (no `Content-Length`).
    public let totalUnitCount: Int64

    /// Creates a snapshot; a negative total means unknown.
    public init(completedUnitCount: Int64, totalUnitCount: Int64) {
        self.completedUnitCount = max(0, completedUnitCount)
        self.totalUnitCount = totalUnitCount < 0 ? -1 : totalUnitCount
    }

    /// Whether the total is known.
    public var isTotalKnown: Bool { totalUnitCount >= 0 }

    /// The fraction done, in 0...1; 0 while the total is unknown (1 once finished, see ``TransferProgress/finished(_:)``).
    public var fractionCompleted: Double {
        guard totalUnitCount > 0 else { return totalUnitCount == 0 ? 1 : 0 }
        return min(1, Double(completedUnitCount) / Double(totalUnitCount))
    }

    /// Whether the transfer is complete.
    public var isFinished: Bool { totalUnitCount >= 0 && completedUnitCount >= totalUnitCount }

    /// `completed/total (percent)`.
    public var description: String {
        isTotalKnown
            ? "\(completedUnitCount)/\(totalUnitCount) (\(Int(fractionCompleted * 100))%)"
            : "\(completedUnitCount)/unknown"
    }

    /// No bytes yet, total unknown.
    public static let initial = TransferProgress(completedUnitCount: 0, totalUnitCount: -1)

    /// The final snapshot of a successful transfer of `bytes` bytes: fraction exactly 1.0.
    public static func finished(_ bytes: Int64) -> TransferProgress {
        TransferProgress(completedUnitCount: bytes, totalUnitCount: bytes)
    }
}
