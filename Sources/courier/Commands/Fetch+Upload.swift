import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// Sends `body` (from memory, a streamed file, or a multipart form) and prints or saves the response.
    func upload(_ body: RequestBody, configuration: SessionConfiguration) async -> ExitCode {
        let prepared: (session: Session, request: UploadRequest)
        switch body {
        case .data(let text):
            let session = makeSession(configuration: configuration, bodyLength: Int64(text.utf8.count))
            let headers = requestHeaders(defaults: [.contentType("application/x-www-form-urlencoded")])
            prepared = (session, session.upload(Data(text.utf8), to: options.url, method: method, headers: headers))
        case .json(let text):
            let session = makeSession(configuration: configuration, bodyLength: Int64(text.utf8.count))
            let headers = requestHeaders(defaults: [.contentType("application/json"), .accept("application/json")])
            prepared = (session, session.upload(Data(text.utf8), to: options.url, method: method, headers: headers))
        case .file(let path):
            if let problem = FileChecks.readableFileProblem(path) { return fileFailure(problem, reading: true) }
            let session = makeSession(configuration: configuration, bodyLength: FileChecks.size(of: URL(fileURLWithPath: path)))
            prepared = (
                session,
                session.upload(
                    fileURL: URL(fileURLWithPath: path), to: options.url, method: method,
                    headers: requestHeaders(defaults: [.contentType("application/octet-stream")]))
            )
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
            let session = makeSession(configuration: configuration, bodyLength: try? form.contentLength)
            prepared = (session, session.upload(multipartFormData: form, to: options.url, method: method, headers: requestHeaders()))
        }
        let request = prepared.request
        cancelOnInterrupt(request)
        let response = await request.serializing(using: RawBodySerializer()).response
        interrupts.clearHandler()
        reportMetrics(response.metrics)
        let data = response.value ?? Data()
        let lastURL = await request.lastRequest?.url
        func done(_ code: ExitCode) -> ExitCode {
            finish(
                code, response: response.response, metrics: response.metrics, bodyBytes: Int64(data.count), lastURL: lastURL,
                error: response.error)
        }
        if let error = response.error { return done(fail(with: error)) }
        if let status = failedStatus(response.response) { return done(status) }
        guard let output = options.output else {
            return done(BodyPrinter(console: console).print(data: data, contentType: response.response?.value(forHTTPHeaderField: "Content-Type")))
        }
        do {
            let url = URL(fileURLWithPath: output)
            try data.write(to: url)
            FileMode.applyDefault(to: url)
        } catch {
            return done(fileFailure("cannot write \(output): \(error.localizedDescription)"))
        }
        return done(.success)
    }
}
