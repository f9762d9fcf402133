import CourierStorm
import CourierTestServer
import Dispatch
import Foundation

import Courier

// The cancellation storm (CourierStorm) built in release: `.ci/run` builds only this program and
// what it needs with `-c release`, not the whole test bundle. Exits 1 when any request ended
// other than with its value or a cancellation, or when libcurl cannot be loaded.

var configuration = SessionConfiguration()
configuration.transport = .curl
configuration.maximumConnectionsPerHost = 16
configuration.temporaryDirectory = FileManager.default.temporaryDirectory
    .appendingPathComponent("courier-storm-\(UUID().uuidString)", isDirectory: true)

let server = try TestServer()
server.dispatcher = { request in .ok(CancellationStorm.answer(toPath: request.path)) }
let callbacks = DispatchQueue(label: "courier.storm.callbacks")
let session = Session(configuration: configuration, baseURL: server.baseURL, callbackQueue: callbacks)
guard session.transportName == "curl" else {
    print("cancellation-storm: libcurl could not be loaded; the storm needs the curl transport")
    exit(1)
}

let started = ContinuousClock.now
let outcome = await CancellationStorm.run(session: session, callbackQueue: callbacks)
print("cancellation-storm (release): \(outcome) in \(ContinuousClock.now - started)")
_ = server.shutdown()
try? FileManager.default.removeItem(at: configuration.temporaryDirectory)
exit(outcome.holds ? 0 : 1)
