import CCurl
import Foundation

/// The loop's notion of time, and the transfers that moved bytes since the loop last looked.
///
/// Callbacks only mark activity; the loop stamps it after libcurl returns. A stamp is therefore
/// never earlier than the bytes it stands for (an idle timeout cannot fire early, however long a
/// pass took), and no callback reads the clock. Confined to the loop's passes.
final class CurlActivityClock {
    /// Where the time is read.
    let source: TransportClock
    /// The time of the latest `tick()`.
    private(set) var now: ContinuousClock.Instant
    private var active: [CurlExchange] = []

    init(source: TransportClock) {
        self.source = source
        now = source.now
    }

    /// Reads the clock.
    func tick() { now = source.now }

    /// Remembers that `exchange` moved bytes; called once per exchange between two stamps.
    func noteActivity(of exchange: CurlExchange) { active.append(exchange) }

    /// Reads the clock and records it as the last activity of every exchange that moved bytes since the last stamp.
    func stampActivity() {
        tick()
        for exchange in active { exchange.stampActivity(at: now) }
        active.removeAll(keepingCapacity: true)
    }
}

/// One transfer as the event loop runs it: its state machine, easy handle, request body, response
/// parser and counters, and the libcurl callbacks that feed its sink.
///
/// Confined to the loop's passes (see ``CurlEventLoop``): created when a pass takes the `start`
/// command, touched only by passes and by libcurl callbacks (which libcurl calls inside a pass, in
/// `curl_multi_socket_action`, `curl_easy_pause` or `curl_multi_remove_handle`), and released when
/// it finishes.
final class CurlExchange {
    /// The caller's handle: request, sink and the counters shared with other threads.
    let handle: CurlTransferHandle
    /// The state machine.
    var state = CurlTransferState()
    /// The easy handle while the transfer is attached.
    var easy: CurlEasyHandle?
    /// The header list set with CURLOPT_HTTPHEADER, freed when the transfer ends.
    var headerList: OpaquePointer?
    /// The list set with CURLOPT_CONNECT_TO (an HTTP/3 alternative), freed when the transfer ends.
    var connectToList: OpaquePointer?
    /// How the transfer was set up.
    var plan: CurlRequestBuilder.Plan?
    /// Where the origin's `Alt-Svc` advertisements go, when the transport follows them and the
    /// request lets it choose the HTTP version.
    var altSvc: (cache: CurlAlternativeServices, origin: CurlAlternativeServices.Origin)?
    /// The request body, when one is sent.
    var body: CurlBodySource?
    /// When the exchange started, for ``TransferMetrics/start``.
    var startDate = Date()
    /// The last time a byte was sent or received (or the idle clock restarted).
    var lastActivity: ContinuousClock.Instant
    /// Bytes moved since the loop's last activity stamp.
    private var movedBytes = false

    /// Why the exchange stopped itself from a callback (a response over the wrong HTTP version).
    var failure: CourierError?
    /// The flow-control window in force: the request's, or none for an HTTP/2 stream that shares
    /// its connection on a libcurl whose paused streams hold up their siblings (see
    /// ``CurlLibrary/pausesHTTP2StreamsIndependently``). Such a body is one the request keeps whole
    /// anyway (in memory, bounded by its size limit, or written to a file), so only a consumer
    /// that sets the pace (a stream, given a connection of its own) needs the window there.
    private var window: Int
    /// The connection's TLS version and cipher suite, read when the head arrived.
    var tlsDetails: (version: String, cipher: String?)?

    private var parser = CurlResponseParser()
    private var deliveredCount = 0
    /// Undoes the response's content codings (libcurl's own decoding is off, see ``receiveCodedBody(_:decoding:)``).
    private var decoding: CurlContentDecoding?
    /// Why the response's codings cannot be undone; the transfer fails at its first body byte.
    private var decodingRefusal: CurlContentDecoding.Failure?
    /// The coded bytes at the front of the next chunks that were decoded already: libcurl hands a
    /// refused chunk over again from its first byte, and part of it may have been used before the refusal.
    private var redeliveredPrefix = 0
    /// The bytes of response heads read so far (interim heads included), held to ``maximumHeadBytes``.
    private var headBytes = 0
    /// The response's trailer section (HTTP/1.1 chunked or HTTP/2), held to ``maximumHeadBytes`` like the head.
    private var trailers = CurlTrailerSection(limit: CurlExchange.maximumHeadBytes)
    /// The response's trailer fields in wire order, once the first arrived.
    var trailerFields: HTTPHeaders? { trailers.fields }
    /// Where decoded bytes are made before they are copied into the chunk delivered.
    private var decodeBuffer: [UInt8] = []
    /// Why the body failed to decode, or decoded past the request's decompression ratio, once it
    /// has: the transfer's error.
    private(set) var decodingFailure: CourierError?
    /// The final response's status, for the errors above.
    private var responseStatus: Int?
    /// Where libcurl's account of the transfer goes (Courier's tools' `-v`), when anywhere.
    private var debugHandler: (@Sendable (CurlDebugEvent) -> Void)?
    private var uploadSent: Int64 = 0
    private var uploadReported: Int64 = 0
    private unowned let clock: CurlActivityClock

    init(handle: CurlTransferHandle, clock: CurlActivityClock) {
        self.handle = handle
        self.clock = clock
        window = handle.request.flowControlWindow
        lastActivity = clock.now
    }

    /// Body bytes delivered to the sink.
    var bytesDelivered: Int64 { Int64(deliveredCount) }

    /// Records the loop's stamp for the bytes moved since the previous one.
    func stampActivity(at instant: ContinuousClock.Instant) {
        lastActivity = instant
        movedBytes = false
    }

    /// Notes that bytes moved; the loop stamps the time after the current perform.
    private func markActivity() {
        guard !movedBytes else { return }
        movedBytes = true
        clock.noteActivity(of: self)
    }

    /// Whether the final response head was delivered.
    var headDelivered: Bool { parser.isComplete }

    /// Whether a status line arrived and its head has not ended yet.
    var readingHead: Bool { parser.isReadingHead }

    /// The earliest instant at which a Courier timeout could fire, if any.
    var timeoutInstant: ContinuousClock.Instant? {
        var instant = handle.request.deadline
        if state.idleClockRuns, let idle = handle.request.idleTimeout {
            let idleEnd = lastActivity + idle
            instant = instant.map { min($0, idleEnd) } ?? idleEnd
        }
        return instant
    }

    /// The timeout that has fired at `now`, if one has.
    func expiredTimeout(at now: ContinuousClock.Instant) -> CurlTimeout? {
        if let deadline = handle.request.deadline, now >= deadline {
            return .deadline(after: deadline - handle.submitted)
        }
        if state.idleClockRuns, let idle = handle.request.idleTimeout, now >= lastActivity + idle {
            return .idle(idle)
        }
        return nil
    }

    /// Emits the last upload progress (`sent == total`) when a completed upload's final count was
    /// never reported because libcurl's progress callback did not run after the last byte.
    func reportFinalUploadProgress(sentBytes: Int64) {
        guard let body, body.length > 0, uploadReported < body.length, sentBytes >= body.length else { return }
        uploadReported = body.length
        handle.sink.receive(.uploadProgress(sent: body.length, total: body.length))
    }

    /// Wires the libcurl callbacks of `easy` to this exchange, and libcurl's verbose account of it
    /// to `debugHandler` when there is one; throws `.transportFailed` naming the option libcurl refused.
    func installCallbacks(on easy: CurlEasyHandle, debugHandler: (@Sendable (CurlDebugEvent) -> Void)? = nil) throws(CourierError) {
        let pointer = easy.pointer
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(.private, pointer: userdata)
        if let debugHandler {
            self.debugHandler = debugHandler
            try easy.check(
                .debugFunction,
                ccurl_easy_setopt_func_debug(pointer, CCURLOPT_DEBUGFUNCTION) { _, type, data, size, userdata in
                    guard let data, let userdata else { return 0 }
                    let bytes = UnsafeRawBufferPointer(start: data, count: size)
                    Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue().describe(type, bytes)
                    return 0
                })
            try easy.set(.debugData, pointer: userdata)
            try easy.set(.verbose, 1)
        }
        try easy.check(
            .headerFunction,
            ccurl_easy_setopt_func_data(pointer, CCURLOPT_HEADERFUNCTION) { buffer, size, count, userdata in
                guard let buffer, let userdata else { return 0 }
                let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
                return Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue().receiveHeaderLine(bytes)
            })
        try easy.set(.headerData, pointer: userdata)
        try easy.check(
            .writeFunction,
            ccurl_easy_setopt_func_data(pointer, CCURLOPT_WRITEFUNCTION) { buffer, size, count, userdata in
                guard let buffer, let userdata else { return 0 }
                let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
                return Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue().receiveBody(bytes)
            })
        try easy.set(.writeData, pointer: userdata)
        guard body != nil else { return }
        try easy.check(
            .readFunction,
            ccurl_easy_setopt_func_read(pointer, CCURLOPT_READFUNCTION) { buffer, size, count, userdata in
                guard let buffer, let userdata else { return Int(CCURL_READFUNC_ABORT) }
                let target = UnsafeMutableRawBufferPointer(start: buffer, count: size * count)
                return Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue().supplyBody(target)
            })
        try easy.set(.readData, pointer: userdata)
        try easy.check(
            .seekFunction,
            ccurl_easy_setopt_func_seek(pointer, CCURLOPT_SEEKFUNCTION) { userdata, offset, origin in
                guard let userdata, origin == SEEK_SET else { return CCURL_SEEKFUNC_CANTSEEK }
                let exchange = Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue()
                return exchange.body?.seek(to: offset) == true ? CCURL_SEEKFUNC_OK : CCURL_SEEKFUNC_FAIL
            })
        try easy.set(.seekData, pointer: userdata)
        if body?.stream?.sendsTrailers == true {
            try easy.check(
                .trailerFunction,
                ccurl_easy_setopt_func_trailer(pointer, CCURLOPT_TRAILERFUNCTION) { list, userdata in
                    guard let list, let userdata else { return CCURL_TRAILERFUNC_ABORT }
                    return Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue().supplyTrailers(list)
                })
            try easy.set(.trailerData, pointer: userdata)
        }
        try easy.set(.noProgress, 0)
        try easy.check(
            .xferInfoFunction,
            ccurl_easy_setopt_func_xferinfo(pointer, CCURLOPT_XFERINFOFUNCTION) { userdata, _, _, _, sent in
                guard let userdata else { return 0 }
                Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue().observeUpload(sent: sent)
                return 0
            })
        try easy.set(.xferInfoData, pointer: userdata)
    }

    // MARK: - Callbacks (inside a pass, inside libcurl)

    /// CURLOPT_DEBUGFUNCTION: hands libcurl's text and the heads to the debug handler; the body
    /// and TLS bytes it also reports are not passed on.
    private func describe(_ type: Int32, _ bytes: UnsafeRawBufferPointer) {
        let kind: CurlDebugEvent.Kind
        switch type {
        case CCURLINFO_TEXT: kind = .text
        case CCURLINFO_HEADER_IN: kind = .headerIn
        case CCURLINFO_HEADER_OUT: kind = .headerOut
        default: return
        }
        debugHandler?(CurlDebugEvent(kind: kind, text: String(decoding: bytes, as: UTF8.self), url: handle.request.url))
    }

    /// The most bytes of response heads a transfer reads: recent libcurls' own limit (300 KiB),
    /// held on every version, as older ones (7.74 among them) read an endless head for ever.
    static let maximumHeadBytes = 300 << 10

    /// CURLOPT_HEADERFUNCTION: feeds the parser and delivers the final head.
    private func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        guard state.isRunning else { return line.count }
        markActivity()
        if !parser.isComplete {
            headBytes += line.count
            if headBytes > Self.maximumHeadBytes {
                failure = CourierError(
                    .responseTooLarge,
                    CourierError.transportHeadLimitMessage("Courier stopped reading it after \(Self.maximumHeadBytes >> 10) KiB"),
                    responseCode: responseStatus, url: handle.request.url)
                return 0  // libcurl ends the transfer with CURLE_WRITE_ERROR
            }
        }
        if parser.isComplete {
            return receiveTrailerLine(line)
        }
        if var head = parser.consume(line, url: handle.request.url) {
            responseStatus = head.statusCode
            if let altSvc, let field = head.headers.value(for: "Alt-Svc") {
                altSvc.cache.learn(AltSvcHeader(parsing: field), for: altSvc.origin)
            }
            if handle.request.automaticDecompression, let coding = head.headers.value(for: "Content-Encoding") {
                do throws(CurlContentDecoding.Failure) {
                    decoding = try CurlContentDecoding.make(contentEncoding: coding)
                } catch {
                    decodingRefusal = error
                }
                head.bodyIsDecoded = decoding != nil
            }
            if !handle.cancelRequested.load(ordering: .relaxed) {
                guard handle.request.httpVersion.accepts(negotiated: head.httpVersion, for: head.url) else {
                    failure = CourierError(
                        .httpVersionUnavailable,
                        "\(head.url.host ?? "The server") answered over \(head.httpVersion), "
                            + "but the request requires \(handle.request.httpVersion).", url: head.url)
                    return 0  // libcurl ends the transfer with CURLE_WRITE_ERROR
                }
                readTLSDetails()
                if head.httpVersion.hasPrefix("HTTP/2"), !handle.request.consumerSetsPace,
                    !CurlLibrary.pausesHTTP2StreamsIndependently
                {
                    window = .max
                }
                handle.sink.receive(.response(head))
            }
        }
        return line.count
    }

    /// A line after the final head: a trailer field, or the blank line that ends the section.
    private func receiveTrailerLine(_ line: UnsafeRawBufferPointer) -> Int {
        switch trailers.receive(line) {
        case .kept, .skipped:
            return line.count
        case .notAField:
            // Older libcurls (7.74 among them) take any line after a chunked body as a trailer (a
            // chunk size written `0x10` reads as the last chunk, its data as trailers); newer ones refuse it.
            failure = CourierError(
                .invalidResponse, "The response's chunked body ended with a line that is not a trailer field.",
                responseCode: responseStatus, url: handle.request.url)
        case .tooLarge:
            failure = CourierError(
                .responseTooLarge,
                "The response's trailer section is larger than the transport accepts: Courier stopped reading it after "
                    + "\(Self.maximumHeadBytes >> 10) KiB.", responseCode: responseStatus, url: handle.request.url)
        }
        return 0  // libcurl ends the transfer with CURLE_WRITE_ERROR
    }

    /// How many times the exchange ran again after the server left it unprocessed.
    private(set) var unprocessedRetries = 0
    /// At most this many runs again (each after libcurl's own few).
    static let maximumUnprocessedRetries = 8

    /// Whether a transfer that ended with `result` was never processed by the server and may run
    /// again on another connection: HTTP/2 streams refused or cut off by a GOAWAY before any answer
    /// (libcurl's "Connection died, tried 5 times before giving up"), for requests without a body
    /// whose method is idempotent.
    func mayRetryUnprocessed(result: Int32) -> Bool {
        guard result == CCURLE_SEND_ERROR || result == CCURLE_HTTP2_STREAM || result == CCURLE_RECV_ERROR,
            handle.mayMultiplex, body == nil, !parser.hasStarted, deliveredCount == 0,
            unprocessedRetries < Self.maximumUnprocessedRetries, state.isRunning,
            !handle.cancelRequested.load(ordering: .relaxed),
            [HTTPMethod.get, .head, .options, .put, .delete, .trace].contains(handle.request.method),
            let detail = easy?.errorDetail,
            detail.contains("Connection died") || detail.contains("REFUSED_STREAM")
        else { return false }
        return true
    }

    /// Whether the exchange ran again after a reused connection turned out dead.
    private(set) var retriedOnStaleConnection = false

    /// Whether a transfer that ended with `result` failed only because the connection it reused
    /// was dead (a server closes an idle connection while libcurl picks it: libcurl 8 reports a
    /// broken pipe, or a framing error over HTTP/2), and may run once more on another connection:
    /// nothing came back, and the request has no body and an idempotent method.
    func mayRetryOnStaleConnection(result: Int32) -> Bool {
        guard result == CCURLE_SEND_ERROR || result == CCURLE_RECV_ERROR || result == CCURLE_HTTP2,
            !retriedOnStaleConnection, plan?.alternative == nil, body == nil, !parser.hasStarted, deliveredCount == 0, state.isRunning,
            !handle.cancelRequested.load(ordering: .relaxed),
            [HTTPMethod.get, .head, .options, .put, .delete, .trace].contains(handle.request.method),
            let easy
        else { return false }
        var connects = 0
        ccurl_easy_getinfo_long(easy.pointer, CCURLINFO_NUM_CONNECTS, &connects)
        return connects == 0
    }

    /// Readies the exchange to run once more after its reused connection was dead.
    func prepareForStaleConnectionRetry() {
        retriedOnStaleConnection = true
        prepareForRetry()
    }

    /// Whether a transfer to its HTTP/3 alternative that ended with `result` may go over TCP
    /// instead: the QUIC connection never completed its handshake (so nothing was sent), or
    /// nothing came back for a request that can be sent twice (no body, an idempotent method).
    func mayFallBackFromAlternative(result: Int32) -> Bool {
        guard result != CCURLE_OK, plan?.alternative != nil, let easy, !parser.hasStarted, deliveredCount == 0,
            state.isRunning, !handle.cancelRequested.load(ordering: .relaxed), (body?.offset ?? 0) == 0
        else { return false }
        var handshake: Int64 = 0
        ccurl_easy_getinfo_off(easy.pointer, CCURLINFO_APPCONNECT_TIME_T, &handshake)
        let idempotent = body == nil && [HTTPMethod.get, .head, .options, .put, .delete, .trace].contains(handle.request.method)
        return handshake == 0 || idempotent
    }

    /// Readies a transfer whose alternative failed to go over TCP: the alternative is left alone
    /// for a while, and the easy handle is set up as without it. Returns `false` when libcurl
    /// refused that (the transfer then ends with its own error).
    func fallBackFromAlternative(tuning: TransportTuning) -> Bool {
        guard var plan, let easy else { return false }
        if let altSvc { altSvc.cache.alternativeFailed(for: altSvc.origin) }
        do throws(CourierError) {
            try CurlRequestBuilder.removeAlternative(plan, from: easy, tuning: tuning)
        } catch {
            return false
        }
        plan.alternative = nil
        plan.httpVersion = plan.tcpHTTPVersion
        self.plan = plan
        prepareForRetry()
        return true
    }

    /// Readies the exchange to run again from the start (nothing of it was delivered).
    func prepareForRetry() {
        unprocessedRetries += 1
        parser = CurlResponseParser()
        failure = nil
        tlsDetails = nil
        decoding = nil
        decodingRefusal = nil
        decodingFailure = nil
        redeliveredPrefix = 0
        headBytes = 0
        trailers = CurlTrailerSection(limit: Self.maximumHeadBytes)
        responseStatus = nil
        easy?.clearErrorDetail()
    }

    /// Reads the TLS version and cipher of an HTTPS exchange's connection while it is attached.
    private func readTLSDetails() {
        guard let easy, handle.request.url.scheme?.lowercased() == "https" else { return }
        var version: UnsafePointer<CChar>?
        var cipher: UnsafePointer<CChar>?
        guard ccurl_tls_details(easy.pointer, &version, &cipher) == 0, let version else { return }
        tlsDetails = (String(cString: version), cipher.map { String(cString: $0) })
    }

    /// CURLOPT_WRITEFUNCTION: delivers a body chunk, or refuses it (libcurl keeps it and offers it
    /// again after unpausing) while a suspend or cancel is pending or the window is full.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard state.isRunning else { return bytes.count }
        guard !bytes.isEmpty else { return 0 }
        if handle.suspendRequested.load(ordering: .relaxed) || handle.cancelRequested.load(ordering: .relaxed) {
            _ = state.handle(.chunkDeferred)
            return Int(CCURL_WRITEFUNC_PAUSE)
        }
        if let decoding { return receiveCodedBody(bytes, decoding: decoding) }
        if let refusal = decodingRefusal {
            decodingFailure = CourierError(.invalidResponse, refusal.message, responseCode: responseStatus, url: handle.request.url)
            return 0
        }
        if exceedsWindow(adding: bytes.count, window: window) {
            // Publish the wait before re-reading the acknowledgements (see CurlTransferHandle.acknowledge):
            // an acknowledgement that raced past the first check is seen here, one that comes later sees the flag.
            handle.awaitingAcknowledgement.store(true, ordering: .sequentiallyConsistent)
            if exceedsWindow(adding: bytes.count, window: window) {
                _ = state.handle(.windowFull)
                return Int(CCURL_WRITEFUNC_PAUSE)
            }
            handle.awaitingAcknowledgement.store(false, ordering: .sequentiallyConsistent)
        }
        deliveredCount += bytes.count
        handle.delivered.store(deliveredCount, ordering: .sequentiallyConsistent)
        markActivity()
        handle.sink.receive(.body(Data(bytes)))
        DeliveryBatch.current?.noteDelivered(bytes: bytes.count)
        return bytes.count
    }

    /// The largest decoded chunk delivered at once.
    static let decodedChunkSize = 64 << 10

    /// CURLOPT_WRITEFUNCTION for a coded body: decodes the chunk only as far as the flow-control
    /// window has room, delivering decoded chunks of at most ``decodedChunkSize`` bytes.
    ///
    /// libcurl's decoding is off, so what libcurl keeps while paused is coded wire bytes, at most one
    /// read (CURLOPT_BUFFERSIZE). When the window fills before the chunk is used up the chunk is
    /// refused: libcurl pauses and hands it over again after unpausing, and the part of it already
    /// decoded (``redeliveredPrefix``) is skipped then. Decoded bytes held for the sink are thus
    /// bounded by the window whatever the compression ratio; the decoders hold their own state (a
    /// 32 KiB zlib window, brotli's up to 16 MiB, zstd's up to 8 MiB, 64 KiB between stacked codings).
    private func receiveCodedBody(_ bytes: UnsafeRawBufferPointer, decoding: CurlContentDecoding) -> Int {
        let skipped = min(redeliveredPrefix, bytes.count)
        redeliveredPrefix -= skipped
        var wire = UnsafeRawBufferPointer(rebasing: bytes[skipped...])
        markActivity()
        // Decoding in chunks smaller than this into a window that has some room left would only
        // make small deliveries: the window counts as full instead.
        let smallest = min(Self.decodedChunkSize, max(1, window / 4))
        if decodeBuffer.isEmpty { decodeBuffer = [UInt8](repeating: 0, count: Self.decodedChunkSize) }
        while true {
            var room = self.room(window: window)
            if room < smallest {
                // As in receiveBody: publish the wait before re-reading the acknowledgements.
                handle.awaitingAcknowledgement.store(true, ordering: .sequentiallyConsistent)
                room = self.room(window: window)
                if room < smallest {
                    _ = state.handle(.windowFull)
                    redeliveredPrefix = bytes.count - wire.count
                    return Int(CCURL_WRITEFUNC_PAUSE)
                }
                handle.awaitingAcknowledgement.store(false, ordering: .sequentiallyConsistent)
            }
            let capacity = min(room, Self.decodedChunkSize)
            let result = decodeBuffer.withUnsafeMutableBytes { buffer in
                Result { () throws(CurlContentDecoding.Failure) in
                    try decoding.decode(&wire, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<capacity]))
                }
            }
            guard case .success(let produced) = result else {
                if case .failure(let failure) = result {
                    decodingFailure = CourierError(.invalidResponse, failure.message, responseCode: responseStatus, url: handle.request.url)
                }
                return 0  // libcurl ends the transfer (CURLE_WRITE_ERROR); finish reports decodingFailure
            }
            if produced > 0, let ratio = handle.request.maximumDecompressionRatio,
                let failure = DecompressionRatioLimit.failure(
                    decoded: Int64(deliveredCount + produced), coded: decoding.wireBytes,
                    ratio: ratio, statusCode: responseStatus, url: handle.request.url)
            {
                decodingFailure = failure
                return 0
            }
            if produced > 0 {
                deliveredCount += produced
                handle.delivered.store(deliveredCount, ordering: .sequentiallyConsistent)
                handle.sink.receive(.body(decodeBuffer.withUnsafeBytes { Data($0[..<produced]) }))
                DeliveryBatch.current?.noteDelivered(bytes: produced)
            }
            // Less than asked for: the chunk is used up and its decoded bytes are all delivered.
            if produced < capacity { return bytes.count }
            // One chunk can decode to many deliveries: a suspend or cancel asked for meanwhile
            // stops them here, as it stops a plain body at its next chunk (see receiveBody).
            if handle.suspendRequested.load(ordering: .relaxed) || handle.cancelRequested.load(ordering: .relaxed) {
                _ = state.handle(.chunkDeferred)
                redeliveredPrefix = bytes.count - wire.count
                return Int(CCURL_WRITEFUNC_PAUSE)
            }
        }
    }

    /// How many decoded bytes the window has room for: a whole chunk when nothing is outstanding.
    private func room(window: Int) -> Int {
        let backlog = deliveredCount - handle.acknowledged.load(ordering: .sequentiallyConsistent)
        return backlog <= 0 ? Self.decodedChunkSize : max(0, window - backlog)
    }

    /// For a transfer libcurl finished: the error when the body's codings did not end (a
    /// truncated gzip stream, say), `nil` when they did or there was no body.
    var incompleteDecodingError: CourierError? {
        guard let decoding, decoding.wireBytes > 0, !decoding.isComplete else { return nil }
        let codings = decoding.codings.reversed().map(\.rawValue).joined(separator: ", ")
        return CourierError(
            .invalidResponse, "The response body ended before the end of its \(codings) data.",
            responseCode: responseStatus, url: handle.request.url)
    }

    /// Whether delivering `count` more bytes would take the unacknowledged backlog past `window`.
    /// A chunk is always delivered into an empty backlog, so a window smaller than one read still moves.
    private func exceedsWindow(adding count: Int, window: Int) -> Bool {
        let backlog = deliveredCount - handle.acknowledged.load(ordering: .sequentiallyConsistent)
        return backlog > 0 && backlog + count > window
    }

    /// CURL_READFUNC_PAUSE (libcurl 7.18.0).
    static let readFunctionPause = 0x1000_0001

    /// CURLOPT_READFUNCTION: copies the next request body bytes; aborts on a file error.
    private func supplyBody(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard state.isRunning, let body else { return Int(CCURL_READFUNC_ABORT) }
        guard let count = body.read(into: buffer) else { return Int(CCURL_READFUNC_ABORT) }
        if count == CurlBodySource.wouldBlock {
            // libcurl pauses sending itself; the stream's waker asks the loop to continue.
            _ = state.handle(.bodyStarved)
            return Self.readFunctionPause
        }
        if count > 0 { markActivity() }
        return count
    }

    /// CURLOPT_TRAILERFUNCTION: the stream body's trailer fields, after its last chunk. The stream
    /// sets them before it hands out its end, so they are there when libcurl asks; libcurl frees the list.
    private func supplyTrailers(_ list: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
        guard state.isRunning, let trailers = body?.stream?.trailers else { return CCURL_TRAILERFUNC_ABORT }
        for field in trailers {
            guard let appended = ccurl_slist_append(list.pointee, "\(field.name): \(field.value)") else { return CCURL_TRAILERFUNC_ABORT }
            list.pointee = appended
        }
        return CCURL_TRAILERFUNC_OK
    }

    /// CURLOPT_XFERINFOFUNCTION: marks upload activity and reports progress, at most about a
    /// hundred times per body (and always the final byte count).
    private func observeUpload(sent: Int64) {
        guard state.isRunning, let body, sent > uploadSent else { return }
        uploadSent = sent
        markActivity()
        let total = body.length
        let step = max(16 * 1024, total / 100)
        guard sent == total || sent - uploadReported >= step else { return }
        uploadReported = sent
        handle.sink.receive(.uploadProgress(sent: sent, total: total))
    }
}
