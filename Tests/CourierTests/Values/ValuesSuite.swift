import Testing

/// The namespace for the value-type tests, so `swift test --filter Values` runs exactly these.
@Suite("Values") enum Values {}
