import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

// The snippets of ../shared/API.md, as written, inside functions that must compile against
// `import Courier` (no @testable). The check is the compiler: this file is part of the test target,
// so a rename or a changed signature in the public API fails the build. The snippets' behaviour is
// covered by the other suites.

private struct User: Decodable, Sendable { let nick: String; let level: Int }
private struct NewUser: Encodable, Sendable { let nick: String }
private struct Profile: Decodable, Sendable { let id: Int }
private struct Feed: Decodable, Sendable { let items: [Int] }

private struct TokenAdapter: RequestInterceptor {
    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest { request }
    func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision { .doNotRetry }
}

@Sendable private func sessionsSection(dir: URL) {
    let session = Session.shared  // zero-configuration default
    let api = Session(
        configuration: .default,  // SessionConfiguration: timeouts, cookies, connection limits, transport
        baseURL: URL(string: "http://127.0.0.1:8080/v2/"),
        headers: ["User-Agent": "MyApp/1.0"],  // HTTPHeaders, sent with every request
        interceptor: RetryPolicy(retryLimit: 2),  // any RequestInterceptor (adapt + retry)
        eventMonitors: [LoggingMonitor()],  // [any EventMonitor]
        deduplication: .safeMethods,  // DeduplicationPolicy: .disabled (default) | .safeMethods
        downloadStore: DownloadStore(directory: dir),  // where resumable downloads keep partial state
        callbackQueue: .main)  // where callback-style handlers run
    var config = SessionConfiguration.default
    config.transport = .automatic  // libcurl on Linux, URLSession on Apple platforms
    config.transport = .curl  // the libcurl multi transport (Linux; loads libcurl at run time)
    config.transport = .urlSession(.ephemeral)  // Foundation's URLSession with this URLSessionConfiguration
    config.requestTimeout = 30  // idle timeout, seconds (sub-second values work)
    config.resourceTimeout = 300  // whole-transfer limit, enforced by Courier
    config.maximumConnectionsPerHost = 8
    config.cookies = .shared  // .shared | .none | .storage(HTTPCookieStorage)
    _ = (session, api, config)
}

@Sendable private func buildingRequests(api: Session, token: String, url: URL) {
    let newUser = NewUser(nick: "bob")
    _ = api.request("users/42")  // GET
    _ = api.request("search", parameters: ["q": "swift", "page": "2"])  // query string for GET/HEAD/DELETE
    _ = api.request("users", method: .post, parameters: newUser, encoder: .json)  // Encodable body
    _ = api.request("form", method: .post, parameters: ["a": "1"], encoder: .urlEncodedForm)
    _ = api.request("slow", headers: [.authorization(bearerToken: token)], timeout: 5)
    _ = api.request(URLRequest(url: url))  // any URLRequestConvertible
}

@Sendable private func callbackStyle(api: Session) {
    api.request("users/42")
        .onWillResume { request in print("starting", request.id) }
        .onDownloadProgress { progress in print(progress.fractionCompleted) }  // TransferProgress
        .onWillSuspend { request in }
        .onWillCancel { request in }
        .validate()  // 2xx and the request's Accept header
        .validate(statusCode: 200..<300)
        .validate(contentType: ["application/json"])
        .validate(json: .object(["nick": .string, "level": .number]))  // JSONShape: .string .number .bool
        .validate(json: .object(["tags": .array(of: .string)]))  // .null .any .object([:]) .array(of:)
        .responseDecodable(of: User.self) { response in print(response.value as Any) }
        .responseString { response in print(response.value ?? "") }  // same body, second handler
        .responseJSON { response in print(response.value?["nick"]?.stringValue ?? "") }  // JSON
        .responseData(queue: .global()) { response in }
}

@Sendable private func stateControl(request: DataRequest) async {
    request.resume()
    request.suspend()
    request.cancel()
    let state: RequestState = await request.state
    _ = [RequestState.initialized, .resumed, .suspended, .cancelled, .finished].contains(state)
}

@Sendable private func asyncAwait(api: Session) async throws {
    let user = try await api.request("users/42").validate().serializingDecodable(User.self).value
    let text = try await api.request("readme").serializingString().value
    let json = try await api.request("config").serializingJSON().value  // JSON
    let data = try await api.request("blob").serializingData().value
    let response = await api.request("users/42").serializingData().response  // DataResponse<Data, CourierError>
    _ = (response.request, response.response?.statusCode, response.data, response.result)
    let metrics: TransferMetrics? = response.metrics
    _ = (
        metrics?.dnsLookup, metrics?.connect, metrics?.tlsHandshake, metrics?.timeToFirstByte, metrics?.total,
        metrics?.bytesSent, metrics?.bytesReceived, metrics?.redirectCount, metrics?.connectionReused
    )
    for await progress in api.request("big").downloadProgress { _ = progress }  // AsyncStream<TransferProgress>
    let typed: DataResponse<Data, CourierError> = response
    _ = (user, text, json, data, typed)
}

@Sendable private func errors(error: CourierError) {
    let kinds: [CourierError.Kind] = [
        .invalidURL, .encodingFailed, .cannotConnect, .timedOut, .connectionLost, .cancelled,
        .validationFailed, .serializationFailed, .emptyResponse, .fileSystem, .resumeFailed,
        .invalidRequest, .invalidResponse,
    ]
    _ = (kinds.contains(error.kind), error.responseCode as Int?, error.underlyingError as (any Error)?)
}

@Sendable private func uploads(api: Session, bigFile: URL, avatar: URL) {
    _ = api.upload(Data("hello".utf8), to: "upload")  // UploadRequest
    _ = api.upload(fileURL: bigFile, to: "upload", method: .put)  // streamed from disk
    api.upload(
        multipartFormData: { form in
            form.append(Data("bob".utf8), withName: "name")
            form.append(fileURL: avatar, withName: "avatar", fileName: "a.jpg", mimeType: "image/jpeg")
        }, to: "profile"
    )
    .onUploadProgress { progress in }
    .responseDecodable(of: Profile.self) { response in }
    let typed: UploadRequest = api.upload(Data(), to: "upload")
    _ = typed
}

@Sendable private func downloads(api: Session, dest: URL, downloads: URL, url: URL) async throws {
    let download = api.download("files/big.iso", to: .file(dest, options: [.removePreviousFile, .createIntermediateDirectories]))
    let fileURL = try await download.serializingDownloadedFileURL().value
    _ = api.download("files/big.iso", to: .directory(downloads))  // server-suggested name
    _ = api.download("files/big.iso", to: .temporary)
    let resumable = api.download("files/big.iso", to: .file(dest), resumable: true)
    api.downloadStore.activeDownload(for: url)?.suspend()  // find the download in flight
    let partials: [PartialDownload] = api.downloadStore.partialDownloads()  // [PartialDownload]: url, bytesOnDisk, expectedLength
    _ = partials.map { ($0.url, $0.bytesOnDisk, $0.expectedLength) }
    api.downloadStore.discard(url)
    _ = (fileURL, resumable)
}

@Sendable private func deduplication() async throws {
    let api = Session(deduplication: .safeMethods)
    async let a = api.request("feed").serializingDecodable(Feed.self).value
    async let b = api.request("feed").serializingString().value
    _ = try await (a, b)
    let statistics = api.deduplicator.statistics  // .transfers, .joined
    _ = (statistics.transfers, statistics.joined)
}

@Sendable private func interceptors(request: DataRequest) async {
    _ = RetryPolicy(retryLimit: 3)  // exponential backoff, idempotent methods, 408/5xx, Retry-After honoured
    _ = Interceptor(adapters: [TokenAdapter()], retriers: [TokenAdapter()])
    _ = await request.cURLDescription()  // a runnable curl command for the request as sent
}
