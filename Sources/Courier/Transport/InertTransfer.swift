/// A transfer that has already ended.
final class InertTransfer: TransportTransfer {
    func suspend() {}
    func resume() {}
    func cancel() {}
    func acknowledge(_ bytes: Int) {}
}
