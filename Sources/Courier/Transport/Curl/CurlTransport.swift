import Foundation

/// Courier's libcurl transport, the default on Linux: libcurl's multi interface driven by one
/// dedicated event-loop thread per transport, with libcurl loaded at run time.
///
/// Pauses in place (`suspend()` keeps the connection and loses no byte), applies backpressure
/// through the flow-control window, enforces idle and resource timeouts itself, and reuses
/// connections up to ``TransportConfiguration/maximumConnectionsPerHost`` per host. A transfer
/// waiting for a free connection to its host counts that wait towards its idle timeout.
@_spi(Transport) public final class CurlTransport: Transport {
    /// What this transport can do: everything the contract describes.
    public let capabilities = TransportCapabilities(name: "curl", pausesInPlace: true, appliesBackpressure: true)
    /// The libcurl in use.
    let library: CurlLibrary

    /// The private CA bundle, when the configuration trusts extra certificates; removed at shutdown.
    let trustStore: CurlTrustStore?

    private let mailbox: CurlMailbox
    private let thread: CurlThread

    /// What became of the loop thread.
    private enum ThreadDisposal: Sendable {
        case running
        case joined
        case detached
    }

    // Protects the one-time choice between joining and detaching the loop thread; held only briefly.
    private let disposal = Locked(ThreadDisposal.running)
    // Held by the thread that joins the loop for the whole join, so concurrent `shutdown()` calls
    // return only once the loop has ended. The loop thread never takes it.
    private let joinLock = Locked(())

    /// Loads libcurl and starts the event loop; throws `.transportFailed` when libcurl cannot be
    /// loaded (so the session can fall back to URLSession) or the loop cannot start, and
    /// `.fileSystem` when an extra trusted certificate cannot be read.
    public init(configuration: TransportConfiguration, receiveBufferSize: Int = 64 * 1024) throws(CourierError) {
        library = try CurlLibrary.load()
        trustStore = configuration.additionalTrustedCertificates.isEmpty ? nil
            : try CurlTrustStore(additionalCertificates: configuration.additionalTrustedCertificates, library: library)
        let defaults = CurlHandleDefaults(receiveBufferSize: receiveBufferSize, caInfoPath: trustStore?.path)
        let loop = try CurlEventLoop(configuration: configuration, defaults: defaults, trustStore: trustStore)
        mailbox = loop.mailbox
        do {
            // The loop moves to its thread here; this initializer does not touch it again.
            thread = try CurlThread.start(name: "courier-curl") { loop.run() }
        } catch {
            loop.discard()
            trustStore?.remove()
            throw CourierError(.transportFailed, "Cannot start the curl event-loop thread (pthread_create error \(error.code)).")
        }
    }

    deinit { shutdown() }

    /// Hands the request to the event loop and returns its handle at once.
    ///
    /// After ``shutdown()`` the sink receives `completed` with `.sessionInvalidated` right here, on
    /// the calling thread, before this method returns.
    public func startTransfer(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer {
        let handle = CurlTransferHandle(request: request, sink: sink, mailbox: mailbox)
        if !mailbox.send(.start(handle)) {
            let error = CourierError(.sessionInvalidated, "The transport was shut down before the request started.", url: request.url)
            sink.receive(.completed(error: error, metrics: TransferMetrics(transport: capabilities.name)))
        }
        return handle
    }

    /// Cancels every transfer (in flight: `.cancelled`; not yet started: `.sessionInvalidated`),
    /// stops the loop and waits for its thread to end. Idempotent.
    ///
    /// Called on the loop thread itself (from a sink), it cannot wait: the thread is detached and
    /// ends on its own once the current callback returns.
    public func shutdown() {
        mailbox.send(.shutdown)
        if thread.isCurrent {
            let detach = disposal.withLock { state in
                guard state == .running else { return false }
                state = .detached
                return true
            }
            if detach { thread.detach() }
            return
        }
        joinLock.withLock { _ in
            let join = disposal.withLock { state in
                guard state == .running else { return false }
                state = .joined
                return true
            }
            if join { thread.join() }
        }
    }
}
