import CCurl

/// A libcurl easy option (`CURLoption`) with its name, so a refusal can say which option it was.
struct CurlOption: Sendable {
    /// The name in libcurl's documentation, e.g. `"CURLOPT_URL"`.
    let name: StaticString
    /// The option number.
    let number: Int32

    /// `CURLOPT_PROTOCOLS`.
    static let protocols = CurlOption(name: "CURLOPT_PROTOCOLS", number: CCURLOPT_PROTOCOLS)
    /// `CURLOPT_NOSIGNAL`.
    static let noSignal = CurlOption(name: "CURLOPT_NOSIGNAL", number: CCURLOPT_NOSIGNAL)
    /// `CURLOPT_TCP_NODELAY`.
    static let tcpNoDelay = CurlOption(name: "CURLOPT_TCP_NODELAY", number: CCURLOPT_TCP_NODELAY)
    /// `CURLOPT_FOLLOWLOCATION`.
    static let followLocation = CurlOption(name: "CURLOPT_FOLLOWLOCATION", number: CCURLOPT_FOLLOWLOCATION)
    /// `CURLOPT_SUPPRESS_CONNECT_HEADERS`.
    static let suppressConnectHeaders = CurlOption(
        name: "CURLOPT_SUPPRESS_CONNECT_HEADERS",
        number: CCURLOPT_SUPPRESS_CONNECT_HEADERS)
    /// `CURLOPT_BUFFERSIZE`.
    static let bufferSize = CurlOption(name: "CURLOPT_BUFFERSIZE", number: CCURLOPT_BUFFERSIZE)
    /// `CURLOPT_ERRORBUFFER`.
    static let errorBuffer = CurlOption(name: "CURLOPT_ERRORBUFFER", number: CCURLOPT_ERRORBUFFER)
    /// `CURLOPT_PROXY`.
    static let proxy = CurlOption(name: "CURLOPT_PROXY", number: CCURLOPT_PROXY)
    /// `CURLOPT_NOPROXY`.
    static let noProxy = CurlOption(name: "CURLOPT_NOPROXY", number: CCURLOPT_NOPROXY)
    /// `CURLOPT_CAINFO`.
    static let caInfo = CurlOption(name: "CURLOPT_CAINFO", number: CCURLOPT_CAINFO)
    /// `CURLOPT_CAPATH`.
    static let caPath = CurlOption(name: "CURLOPT_CAPATH", number: CCURLOPT_CAPATH)
    /// `CURLOPT_SSL_CTX_FUNCTION` (with `CURLOPT_SSL_CTX_DATA`; set through ccurl).
    static let sslContextFunction = CurlOption(name: "CURLOPT_SSL_CTX_FUNCTION", number: 20108)
    /// `CURLOPT_SSLVERSION`.
    static let sslVersion = CurlOption(name: "CURLOPT_SSLVERSION", number: CCURLOPT_SSLVERSION)
    /// `CURLOPT_SSL_VERIFYPEER`.
    static let sslVerifyPeer = CurlOption(name: "CURLOPT_SSL_VERIFYPEER", number: CCURLOPT_SSL_VERIFYPEER)
    /// `CURLOPT_SSL_VERIFYHOST`.
    static let sslVerifyHost = CurlOption(name: "CURLOPT_SSL_VERIFYHOST", number: CCURLOPT_SSL_VERIFYHOST)
    /// `CURLOPT_PINNEDPUBLICKEY`.
    static let pinnedPublicKey = CurlOption(name: "CURLOPT_PINNEDPUBLICKEY", number: CCURLOPT_PINNEDPUBLICKEY)
    /// `CURLOPT_SSLCERT`.
    static let sslCert = CurlOption(name: "CURLOPT_SSLCERT", number: CCURLOPT_SSLCERT)
    /// `CURLOPT_SSLCERTTYPE`.
    static let sslCertType = CurlOption(name: "CURLOPT_SSLCERTTYPE", number: CCURLOPT_SSLCERTTYPE)
    /// `CURLOPT_SSLKEY`.
    static let sslKey = CurlOption(name: "CURLOPT_SSLKEY", number: CCURLOPT_SSLKEY)
    /// `CURLOPT_KEYPASSWD`.
    static let keyPassword = CurlOption(name: "CURLOPT_KEYPASSWD", number: CCURLOPT_KEYPASSWD)
    /// `CURLOPT_HTTP_VERSION`.
    static let httpVersion = CurlOption(name: "CURLOPT_HTTP_VERSION", number: CCURLOPT_HTTP_VERSION)
    /// `CURLOPT_FRESH_CONNECT`.
    static let freshConnect = CurlOption(name: "CURLOPT_FRESH_CONNECT", number: CCURLOPT_FRESH_CONNECT)
    /// `CURLOPT_FORBID_REUSE`.
    static let forbidReuse = CurlOption(name: "CURLOPT_FORBID_REUSE", number: CCURLOPT_FORBID_REUSE)
    /// `CURLOPT_SHARE`.
    static let share = CurlOption(name: "CURLOPT_SHARE", number: CCURLOPT_SHARE)
    /// `CURLOPT_PIPEWAIT`.
    static let pipeWait = CurlOption(name: "CURLOPT_PIPEWAIT", number: CCURLOPT_PIPEWAIT)
    /// `CURLOPT_NOBODY`.
    static let noBody = CurlOption(name: "CURLOPT_NOBODY", number: CCURLOPT_NOBODY)
    /// `CURLOPT_UPLOAD`.
    static let upload = CurlOption(name: "CURLOPT_UPLOAD", number: CCURLOPT_UPLOAD)
    /// `CURLOPT_INFILESIZE_LARGE`.
    static let inFileSizeLarge = CurlOption(name: "CURLOPT_INFILESIZE_LARGE", number: CCURLOPT_INFILESIZE_LARGE)
    /// `CURLOPT_CUSTOMREQUEST`.
    static let customRequest = CurlOption(name: "CURLOPT_CUSTOMREQUEST", number: CCURLOPT_CUSTOMREQUEST)
    /// `CURLOPT_ACCEPT_ENCODING`.
    static let acceptEncoding = CurlOption(name: "CURLOPT_ACCEPT_ENCODING", number: CCURLOPT_ACCEPT_ENCODING)
    /// `CURLOPT_HTTP_CONTENT_DECODING`.
    static let httpContentDecoding = CurlOption(name: "CURLOPT_HTTP_CONTENT_DECODING", number: CCURLOPT_HTTP_CONTENT_DECODING)
    /// `CURLOPT_HTTPHEADER`.
    static let httpHeader = CurlOption(name: "CURLOPT_HTTPHEADER", number: CCURLOPT_HTTPHEADER)
    /// `CURLOPT_PRIVATE`.
    static let `private` = CurlOption(name: "CURLOPT_PRIVATE", number: CCURLOPT_PRIVATE)
    /// `CURLOPT_HEADERFUNCTION`.
    static let headerFunction = CurlOption(name: "CURLOPT_HEADERFUNCTION", number: CCURLOPT_HEADERFUNCTION)
    /// `CURLOPT_HEADERDATA`.
    static let headerData = CurlOption(name: "CURLOPT_HEADERDATA", number: CCURLOPT_HEADERDATA)
    /// `CURLOPT_WRITEFUNCTION`.
    static let writeFunction = CurlOption(name: "CURLOPT_WRITEFUNCTION", number: CCURLOPT_WRITEFUNCTION)
    /// `CURLOPT_WRITEDATA`.
    static let writeData = CurlOption(name: "CURLOPT_WRITEDATA", number: CCURLOPT_WRITEDATA)
    /// `CURLOPT_READFUNCTION`.
    static let readFunction = CurlOption(name: "CURLOPT_READFUNCTION", number: CCURLOPT_READFUNCTION)
    /// `CURLOPT_READDATA`.
    static let readData = CurlOption(name: "CURLOPT_READDATA", number: CCURLOPT_READDATA)
    /// `CURLOPT_SEEKFUNCTION`.
    static let seekFunction = CurlOption(name: "CURLOPT_SEEKFUNCTION", number: CCURLOPT_SEEKFUNCTION)
    /// `CURLOPT_SEEKDATA`.
    static let seekData = CurlOption(name: "CURLOPT_SEEKDATA", number: CCURLOPT_SEEKDATA)
    /// `CURLOPT_TRAILERFUNCTION` (libcurl 7.64.0).
    static let trailerFunction = CurlOption(name: "CURLOPT_TRAILERFUNCTION", number: CCURLOPT_TRAILERFUNCTION)
    /// `CURLOPT_TRAILERDATA` (libcurl 7.64.0).
    static let trailerData = CurlOption(name: "CURLOPT_TRAILERDATA", number: CCURLOPT_TRAILERDATA)
    /// `CURLOPT_NOPROGRESS`.
    static let noProgress = CurlOption(name: "CURLOPT_NOPROGRESS", number: CCURLOPT_NOPROGRESS)
    /// `CURLOPT_XFERINFOFUNCTION`.
    static let xferInfoFunction = CurlOption(name: "CURLOPT_XFERINFOFUNCTION", number: CCURLOPT_XFERINFOFUNCTION)
    /// `CURLOPT_XFERINFODATA`.
    static let xferInfoData = CurlOption(name: "CURLOPT_XFERINFODATA", number: CCURLOPT_XFERINFODATA)
    /// `CURLOPT_LOW_SPEED_LIMIT`.
    static let lowSpeedLimit = CurlOption(name: "CURLOPT_LOW_SPEED_LIMIT", number: CCURLOPT_LOW_SPEED_LIMIT)
    /// `CURLOPT_LOW_SPEED_TIME`.
    static let lowSpeedTime = CurlOption(name: "CURLOPT_LOW_SPEED_TIME", number: CCURLOPT_LOW_SPEED_TIME)
    /// Connect (TCP, proxy tunnel, TLS) and stop: the caller speaks its own protocol on the connection.
    static let connectOnly = CurlOption(name: "CURLOPT_CONNECT_ONLY", number: CCURLOPT_CONNECT_ONLY)
    /// Tunnel through an HTTP proxy with CONNECT.
    static let httpProxyTunnel = CurlOption(name: "CURLOPT_HTTPPROXYTUNNEL", number: CCURLOPT_HTTPPROXYTUNNEL)
    /// `CURLOPT_CONNECT_TO`: connect to another host and port than the URL's.
    static let connectTo = CurlOption(name: "CURLOPT_CONNECT_TO", number: CCURLOPT_CONNECT_TO)
    /// The longest the connect may take, in milliseconds.
    static let connectTimeoutMilliseconds = CurlOption(name: "CURLOPT_CONNECTTIMEOUT_MS", number: CCURLOPT_CONNECTTIMEOUT_MS)
    /// `CURLOPT_MAX_RECV_SPEED_LARGE`: the most bytes per second read.
    static let maximumReceiveSpeed = CurlOption(name: "CURLOPT_MAX_RECV_SPEED_LARGE", number: CCURLOPT_MAX_RECV_SPEED_LARGE)
    /// `CURLOPT_MAX_SEND_SPEED_LARGE`: the most bytes per second sent.
    static let maximumSendSpeed = CurlOption(name: "CURLOPT_MAX_SEND_SPEED_LARGE", number: CCURLOPT_MAX_SEND_SPEED_LARGE)
    /// `CURLOPT_VERBOSE`: libcurl describes the transfer to the debug function.
    static let verbose = CurlOption(name: "CURLOPT_VERBOSE", number: CCURLOPT_VERBOSE)
    /// `CURLOPT_DEBUGFUNCTION` (set through ccurl).
    static let debugFunction = CurlOption(name: "CURLOPT_DEBUGFUNCTION", number: CCURLOPT_DEBUGFUNCTION)
    /// `CURLOPT_DEBUGDATA`.
    static let debugData = CurlOption(name: "CURLOPT_DEBUGDATA", number: CCURLOPT_DEBUGDATA)
}

/// A libcurl multi option (`CURLMoption`) with its name, so a refusal can say which option it was.
struct CurlMultiOption: Sendable {
    /// The name in libcurl's documentation, e.g. `"CURLMOPT_MAXCONNECTS"`.
    let name: StaticString
    /// The option number.
    let number: Int32

    /// `CURLMOPT_MAX_HOST_CONNECTIONS`.
    static let maxHostConnections = CurlMultiOption(name: "CURLMOPT_MAX_HOST_CONNECTIONS", number: CCURLMOPT_MAX_HOST_CONNECTIONS)
    /// `CURLMOPT_MAX_CONCURRENT_STREAMS`.
    static let maxConcurrentStreams = CurlMultiOption(name: "CURLMOPT_MAX_CONCURRENT_STREAMS", number: CCURLMOPT_MAX_CONCURRENT_STREAMS)
    /// `CURLMOPT_MAXCONNECTS`.
    static let maxConnects = CurlMultiOption(name: "CURLMOPT_MAXCONNECTS", number: CCURLMOPT_MAXCONNECTS)
}

extension CourierError {
    /// `.transportFailed` for an easy option libcurl refused with `code`:
    /// "libcurl refused CURLOPT_CUSTOMREQUEST (error 43: A libcurl function was given a bad argument)".
    init(refused option: CurlOption, code: Int32) {
        self.init(refusedOption: "\(option.name)", code: code)
    }

    /// `.transportFailed` for an easy option (named `name`) libcurl refused with `code`.
    init(refusedOption name: String, code: Int32) {
        let error = CurlError(code: code)
        self.init(.transportFailed, "libcurl refused \(name) (error \(code): \(error.text))", underlyingError: error)
    }

    /// `.transportFailed` for a multi option (named `name`) libcurl refused with the `CURLMcode` `code`.
    init(refusedMultiOption name: String, code: Int32) {
        let text = String(cString: ccurl_multi_strerror(code))
        self.init(.transportFailed, "libcurl refused \(name) (error \(code): \(text))")
    }
}

extension CurlEasyHandle {
    /// Checks the result of setting `option`: throws ``CourierError/Kind/transportFailed`` naming it
    /// unless `code` is `CURLE_OK`.
    func check(_ option: CurlOption, _ code: Int32) throws(CourierError) {
        guard code == CCURLE_OK else { throw CourierError(refused: option, code: code) }
    }

    /// Sets a `long` option.
    func set(_ option: CurlOption, _ value: Int) throws(CourierError) {
        try check(option, ccurl_easy_setopt_long(pointer, option.number, value))
    }

    /// Sets a `curl_off_t` option.
    func set(_ option: CurlOption, offset value: Int64) throws(CourierError) {
        try check(option, ccurl_easy_setopt_off(pointer, option.number, value))
    }

    /// Sets a pointer option (userdata, a list, a buffer).
    func set(_ option: CurlOption, pointer value: UnsafeRawPointer?) throws(CourierError) {
        try check(option, ccurl_easy_setopt_ptr(pointer, option.number, value))
    }

    /// Sets a string option; libcurl copies the string.
    func set(_ option: CurlOption, string value: String) throws(CourierError) {
        try check(option, value.withCString { ccurl_easy_setopt_ptr(pointer, option.number, $0) })
    }

    /// Sets a string option, or clears it (NULL: libcurl's "none", not its default) when `value` is `nil`.
    func set(_ option: CurlOption, optionalString value: String?) throws(CourierError) {
        guard let value else { return try check(option, ccurl_easy_setopt_ptr(pointer, option.number, nil)) }
        try set(option, string: value)
    }
}

extension CurlEventLoop {
    /// Sets a `long` multi option; throws ``CourierError/Kind/transportFailed`` naming it when libcurl refuses.
    static func set(_ option: CurlMultiOption, _ value: Int, on multi: OpaquePointer) throws(CourierError) {
        let code = ccurl_multi_setopt_long(multi, option.number, value)
        guard code == 0 else { throw CourierError(refusedMultiOption: "\(option.name)", code: code) }
    }
}
