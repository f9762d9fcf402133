import Courier
import CourierTestServer
import Foundation

/// The user the demo's API returns.
struct DemoUser: Decodable, Sendable, CustomStringConvertible {
    let id: Int
    let nick: String
    let level: Int
    let tags: [String]

    var description: String {
        "DemoUser(id: \(id), nick: \"\(nick)\", level: \(level), tags: \(tags))"
    }
}

extension Demo {
    /// Step 1: GET JSON, decode it into ``DemoUser``, show the pretty-printed body and the figures.
    @Sendable static func jsonStep(_ context: DemoContext) async -> Bool {
        let body = #"{"id":42,"nick":"ada","level":7,"tags":["swift","http"],"active":true,"manager":null}"#
        context.server.route("/api/users/42") { _ in .json(body) }
        let session = makeSession()
        let response = await session.request(context.server.url("/api/users/42")).validate()
            .serializingDecodable(DemoUser.self).response
        guard case .success(let user) = response.result else {
            context.say("failed: \(response.error?.description ?? "no value")")
            return false
        }
        let bytes = response.data?.count ?? 0
        context.say(
            "GET /api/users/42 → \(HTTPStatusText.line(response.response?.statusCode ?? 0)), \(bytes) bytes in "
                + "\(DemoContext.time(response.metrics)) over \(response.metrics?.transport ?? session.transportName)")
        context.say("decoded: \(user)")
        if let data = response.data,
            let pretty = JSONColouring.format(data, palette: context.console.stdoutUsesColour ? .ansi : .none)
        {
            context.sayBlock(pretty)
        }
        return user.id == 42 && user.nick == "ada" && bytes == body.utf8.count
    }

    /// Step 2: a 404 rejected by `validate()`, shown as the `CourierError` a program would get.
    @Sendable static func validationStep(_ context: DemoContext) async -> Bool {
        context.server.route("/api/users/99") { _ in .json(#"{"error":"no such user","id":99}"#, status: 404) }
        let session = makeSession()
        let response = await session.request(context.server.url("/api/users/99")).validate()
            .serializingDecodable(DemoUser.self).response
        let status = response.response?.statusCode ?? 0
        context.say("GET /api/users/99 → \(HTTPStatusText.line(status)), \(response.data?.count ?? 0) bytes in \(DemoContext.time(response.metrics))")
        guard let error = response.error else {
            context.say("validate() accepted it, which it should not have")
            return false
        }
        context.say("validate() rejected it with a CourierError of kind .\(error.kind):")
        context.say("  \(error.description)")
        if let data = response.data { context.say("the body is still available: \(String(decoding: data, as: UTF8.self))") }
        return error.kind == .validationFailed && error.responseCode == 404
    }
}
