import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// Sends `body` (from memory, a streamed file, or a multipart form) and prints or saves the response.
    func upload(_ body: RequestBody, session: Session) async -> ExitCode {
        let request: UploadRequest
        switch body {
        case .data(let text):
            let headers = requestHeaders(defaults: [.contentType("application/x-www-form-urlencoded")])
            request = session.upload(Data(text.utf8), to: options.url, method: method, headers: headers)
        case .json(let text):
            let headers = requestHeaders(defaults: [.contentType("application/json"), .accept("application/json")])
            request = session.upload(Data(text.utf8), to: options.url, method: method, headers: headers)
        case .file(let path):
            if let problem = FileChecks.readableFileProblem(path) { return fileFailure(problem) }
            request = session.upload(fileURL: URL(fileURLWithPath: path), to: options.url, method: method,
                                     headers: requestHeaders(defaults: [.contentType("application/octet-stream")]))
        case .form(let fields):
            let form = MultipartFormData()
            for field in fields {
                switch field.value {
                case .text(let text):
                    form.append(text, withName: field.name)
                case .file(let path, let mimeType):
                    if let problem = FileChecks.readableFileProblem(path) { return fileFailure(problem) }
                    form.append(fileURL: URL(fileURLWithPath: path), withName: field.name, mimeType: mimeType)
                }
            }
            request = session.upload(multipartFormData: form, to: options.url, method: method, headers: requestHeaders())
        }
        cancelOnInterrupt(request)
        let response = await request.serializing(using: RawBodySerializer()).response
        interrupts.clearHandler()
        reportMetrics(response.metrics)
        if let error = response.error { return fail(with: error) }
        if let status = failedStatus(response.response) { return status }
        let data = response.value ?? Data()
        guard let output = options.output else {
            return BodyPrinter(console: console).print(data: data, contentType: response.response?.value(forHTTPHeaderField: "Content-Type"))
        }
        do {
            try data.write(to: URL(fileURLWithPath: output))
        } catch {
            return fileFailure("cannot write \(output): \(error.localizedDescription)")
        }
        return .success
    }

    /// Prints a file-system problem and returns its exit status.
    func fileFailure(_ problem: String) -> ExitCode {
        console.message("courier: \(problem)")
        return .fileSystem
    }
}
