import CCurl

/// A libcurl easy handle with its error buffer.
///
/// Owned by the transport's event loop: created, configured, added, removed, reset and cleaned up
/// only during one of its passes, under its pass lock (libcurl handles are not thread-safe).
final class CurlEasyHandle {
    /// The `CURL *`.
    let pointer: OpaquePointer
    /// CURLOPT_ERRORBUFFER: libcurl writes a detailed message here when a transfer fails.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The peer address the last transfer on this handle reported, formatted for metrics: a pooled
    /// handle usually serves the same connection again, so the text is made once.
    var lastRemoteAddress: (ip: String, port: Int, text: String)?
    /// Whether CURLOPT_FRESH_CONNECT and CURLOPT_FORBID_REUSE are on (see ``CurlRequestBuilder``).
    var isolatesConnection = false
    /// What the handle's callbacks point to, released only after `curl_easy_cleanup` (stored
    /// properties go after `deinit`'s body), which may still call them.
    var callbackOwner: AnyObject?
    /// Whether the handle served a transfer before (it came back from ``CurlEasyPool``).
    private(set) var hasServedTransfer = false

    /// Creates a handle; `nil` when libcurl cannot allocate one.
    init?() {
        guard let pointer = ccurl_easy_init() else { return nil }
        self.pointer = pointer
        errorBuffer = .allocate(capacity: Int(CCURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CCURL_ERROR_SIZE))
    }

    deinit {
        ccurl_easy_cleanup(pointer)
        errorBuffer.deallocate()
    }

    /// The error buffer's text ("" when libcurl wrote nothing).
    var errorDetail: String {
        errorBuffer[Int(CCURL_ERROR_SIZE) - 1] = 0
        return String(cString: errorBuffer)
    }

    /// Empties the error buffer, for a transfer that runs again on this handle.
    func clearErrorDetail() { errorBuffer[0] = 0 }

    /// Clears every option and the error buffer so the handle can serve another transfer.
    func reset() {
        ccurl_easy_reset(pointer)
        isolatesConnection = false
        errorBuffer[0] = 0
        hasServedTransfer = true
    }
}

/// A few idle easy handles kept for the next transfers, so a busy transport does not allocate and
/// initialise a handle (and its receive buffer) per request. Loop-thread confined.
struct CurlEasyPool {
    private var idle: [CurlEasyHandle] = []
    /// How many idle handles are kept at most.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// An idle handle, or a new one; `nil` when libcurl cannot allocate one.
    mutating func take() -> CurlEasyHandle? {
        idle.popLast() ?? CurlEasyHandle()
    }

    /// Takes back a handle that is no longer on the multi handle.
    mutating func recycle(_ handle: CurlEasyHandle) {
        guard idle.count < capacity else { return }
        handle.reset()
        idle.append(handle)
    }

    /// Releases every idle handle.
    mutating func removeAll() {
        idle.removeAll()
    }
}
