/// What kind of body a response sink keeps: the one fact every body policy of the engine and the
/// transport follows from (see ``BodyKind/validatesAtHead`` and its siblings).
///
/// A kind is fixed for the life of a sink; what changes while a body arrives (a stream that already
/// handed bytes to its consumer may no longer retry) is the sink's state, not its kind
/// (``ResponseBodySink/hasHandedOutBytes``).
enum BodyKind: Equatable, Sendable, CaseIterable {
    /// Kept in memory until the request completes (data requests).
    case memory
    /// Written to a temporary file and moved to its destination (downloads).
    case file
    /// Written to a resumable download store's partial file, continued by `Range` across attempts.
    case resumableStore
    /// Handed chunk by chunk to a consumer who takes them at its own pace (data streams).
    case stream

    /// Body bytes the transport may deliver ahead of the sink (see ``TransportRequest/flowControlWindow``).
    var flowControlWindow: Int {
        switch self {
        // Bytes are stored as they arrive, so the window only bounds the queue ahead of the executor.
        case .memory: 8 << 20
        case .file, .resumableStore: 4 << 20
        case .stream: 1 << 20
        }
    }

    /// Validate as soon as the head arrives: a stream hands bytes out before the body is complete.
    var validatesAtHead: Bool { self == .stream }

    /// Whether the body may come from a transfer shared with other requests (see
    /// ``ExchangeContext/bodyMayBeShared``). Not a stream (its consumer sets the pace of the transfer,
    /// which a shared transfer could not follow) nor a resumable download (its partial file and
    /// journal belong to this one request).
    var allowsSharing: Bool {
        switch self {
        case .memory, .file: true
        case .resumableStore, .stream: false
        }
    }

    /// Whether the body is expected to be large (downloads and streams; see
    /// ``TransportRequest/expectsLargeBody``).
    var expectsLargeBody: Bool { self != .memory }

    /// Whether a consumer takes the body at its own pace, so the transfer may stay paused for long
    /// (see ``TransportRequest/consumerSetsPace``).
    var consumerSetsPace: Bool { self == .stream }

    /// Whether a response cache may answer with a stored body and keep this one (see
    /// ``ExchangeContext/bodyMayBeStored``). Not a resumable download: it continues its own partial
    /// file by `Range`, and a stored copy is no part of it.
    var allowsStoring: Bool { self != .resumableStore }

    /// Which size limit the engine enforces on the body's bytes.
    var sizeLimitClass: BodySizeLimitClass {
        switch self {
        case .memory: .memory
        // Downloads are limited by `maximumDownloadSize`.
        case .file, .resumableStore: .download
        // A stream's consumer bounds memory by taking chunks.
        case .stream: .unlimited
        }
    }
}
