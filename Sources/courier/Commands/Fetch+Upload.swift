import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// The `Content-Type` curl sends with the data options: a form, unless `-H` says otherwise.
    static let formType = HTTPHeader.contentType("application/x-www-form-urlencoded")

    /// Sends `body` (from memory, a streamed file or standard input, or a multipart form) and
    /// prints or saves the response.
    func upload(_ body: RequestBody) async -> ExitCode {
        let request: UploadRequest
        switch body {
        case .data(let text):
            request = session.upload(Data(text.utf8), to: options.url, method: method, headers: requestHeaders(defaults: [Self.formType]))
        case .bytes(let bytes):
            request = session.upload(bytes, to: options.url, method: method, headers: requestHeaders(defaults: [Self.formType]))
        case .json(let text):
            let headers = requestHeaders(defaults: [.contentType("application/json"), .accept("application/json")])
            request = session.upload(Data(text.utf8), to: options.url, method: method, headers: headers)
        case .file(let path), .upload(let path):
            if let problem = FileChecks.readableFileProblem(path) { return fileFailure(problem, reading: true) }
            let defaults = body.isUpload ? [] : [Self.formType]
            request = session.upload(
                fileURL: URL(fileURLWithPath: path), to: options.url, method: method, headers: requestHeaders(defaults: defaults))
        case .standardInput:
            let stream = InputStream(fileAtPath: "/dev/stdin") ?? InputStream(data: Data())
            request = session.upload(stream, to: options.url, method: method, headers: requestHeaders())
        case .form(let fields):
            let form = MultipartFormData()
            for field in fields {
                switch field.value {
                case .text(let text):
                    form.append(text, withName: field.name)
                case .file(let path, let mimeType):
                    if let problem = FileChecks.readableFileProblem(path) { return fileFailure(problem, reading: true) }
                    form.append(fileURL: URL(fileURLWithPath: path), withName: field.name, mimeType: mimeType)
                }
            }
            request = session.upload(multipartFormData: form, to: options.url, method: method, headers: requestHeaders())
        }
        prepare(request)
        let response = await request.serializing(using: RawBodySerializer()).response
        interrupts.clearHandler(slot: index)
        reportMetrics(response.metrics)
        let data = response.value ?? Data()
        let lastURL = await request.lastRequest?.url
        func done(_ code: ExitCode) -> ExitCode {
            finish(
                code, response: response.response, metrics: response.metrics, bodyBytes: Int64(data.count), lastURL: lastURL,
                error: response.error)
        }
        if let error = response.error { return done(fail(with: error)) }
        let written: ExitCode
        if let output = options.output {
            if let problem = prepareDestination(output) { return done(fileFailure(problem)) }
            guard let handle = OutputPath.openForWriting(output, appending: false) else {
                return done(fileFailure("cannot write \(output): \(String(cString: strerror(errno)))"))
            }
            defer { try? handle.close() }
            do {
                try handle.write(contentsOf: data)
                written = .success
            } catch {
                return done(fileFailure("cannot write \(output): \(error.localizedDescription)"))
            }
        } else {
            written = BodyPrinter(console: console).print(data: data, contentType: response.response?.value(forHTTPHeaderField: "Content-Type"))
        }
        if written == .success, let status = failedStatus(response.response) { return done(status) }
        return done(written)
    }
}
