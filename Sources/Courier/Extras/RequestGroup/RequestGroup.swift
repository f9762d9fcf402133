import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs several requests at once and delivers every response together, in the order given.
///
/// ```swift
/// let group = RequestGroup([api.request("profile"), api.request("feed"), api.request("badges")])
/// let responses = await group.serializingData()          // [DataResponse<Data, CourierError>], input order
/// group.responseData { responses in … }                   // the same, as a callback
/// group.cancel()                                          // cancels every request
/// RequestGroup(requests, failFast: true)                  // the first failure cancels the rest
/// ```
/// Each request keeps its own validators, hooks and interceptors; a failure of one never hides
/// the others' responses. With `failFast`, the first response that fails cancels the requests
/// still running: the failed one keeps its error, those cancelled report `.cancelled`, and those
/// already finished keep their result. Cancelling the `Task` that awaits a group cancels every
/// request in it.
///
/// There is no chain helper: requests that depend on each other read best as plain async code,
/// where each step can use the previous value and errors propagate by themselves:
/// ```swift
/// let user = try await api.request("me").serializingDecodable(User.self).value
/// let team = try await api.request("teams/\(user.teamID)").serializingDecodable(Team.self).value
/// ```
public final class RequestGroup: Sendable {
    /// The requests, in the order their responses are delivered.
    public let requests: [any DataResponseRequest]
    /// Whether the first failure cancels the requests still running.
    public let failFast: Bool

    /// Groups `requests`; nothing starts until a response is asked for.
    public init(_ requests: [any DataResponseRequest], failFast: Bool = false) {
        self.requests = requests
        self.failFast = failFast
    }

    /// Cancels every request of the group.
    public func cancel() {
        for request in requests { request.cancel() }
    }

    // MARK: async/await

    /// Starts every request and returns all their responses, serialized by `serializer`, in input order.
    public func serializing<Serializer: ResponseSerializer>(using serializer: Serializer) async
        -> [DataResponse<Serializer.SerializedObject, CourierError>]
    {
        let tasks = requests.map { $0.serializing(using: serializer) }
        return await withTaskGroup(of: (Int, DataResponse<Serializer.SerializedObject, CourierError>).self) { group in
            for (index, task) in tasks.enumerated() {
                group.addTask { (index, await task.response) }
            }
            var responses: [DataResponse<Serializer.SerializedObject, CourierError>?] = Array(repeating: nil, count: tasks.count)
            var cancelledRest = false
            for await (index, response) in group {
                responses[index] = response
                if failFast, !cancelledRest, response.error != nil {
                    cancelledRest = true
                    cancel()
                }
            }
            return responses.compactMap { $0 }
        }
    }

    /// Every body as `Data`, in input order.
    public func serializingData() async -> [DataResponse<Data, CourierError>] {
        await serializing(using: DataResponseSerializer())
    }

    /// Every body as text, in input order.
    public func serializingString(encoding: String.Encoding? = nil) async -> [DataResponse<String, CourierError>] {
        await serializing(using: StringResponseSerializer(encoding: encoding))
    }

    /// Every body parsed as ``JSON``, in input order.
    public func serializingJSON() async -> [DataResponse<JSON, CourierError>] {
        await serializing(using: JSONResponseSerializer())
    }

    /// Every body decoded as `type`, in input order.
    public func serializingDecodable<T: Decodable & Sendable>(_ type: T.Type = T.self, decoder: any DataDecoder = JSONDecoder()) async
        -> [DataResponse<T, CourierError>]
    {
        await serializing(using: DecodableResponseSerializer<T>(decoder: decoder))
    }

    // MARK: Callback style

    /// Starts every request and calls `completionHandler` once, on `queue` (the first request's
    /// session callback queue by default), with all responses serialized by `serializer`.
    public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue? = nil, using serializer: Serializer,
        completionHandler: @escaping @Sendable ([DataResponse<Serializer.SerializedObject, CourierError>]) -> Void
    ) {
        let queue = queue ?? requests.first?.session.callbackQueue ?? .main
        Task {
            let responses = await serializing(using: serializer)
            queue.async { completionHandler(responses) }
        }
    }

    /// Calls `completionHandler` once with every body as `Data`, in input order.
    public func responseData(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable ([DataResponse<Data, CourierError>]) -> Void
    ) {
        response(queue: queue, using: DataResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` once with every body decoded as `type`, in input order.
    public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, queue: DispatchQueue? = nil, decoder: any DataDecoder = JSONDecoder(),
        completionHandler: @escaping @Sendable ([DataResponse<T, CourierError>]) -> Void
    ) {
        response(queue: queue, using: DecodableResponseSerializer<T>(decoder: decoder), completionHandler: completionHandler)
    }
}
