@_spi(Transport) @testable import Courier
import Foundation
import Testing

/// `Alt-Svc` fields read for their HTTP/3 alternative, and what a transport remembers of them.
@Suite("Alt-Svc")
struct AltSvcTests {
    private static let day = Duration.seconds(86_400)

    static let fields: [(String, AltSvcHeader)] = [
        (#"h3=":443""#, .http3(AltSvcAlternative(host: nil, port: 443, maxAge: day))),
        (#"h3=":8443"; ma=3600"#, .http3(AltSvcAlternative(host: nil, port: 8443, maxAge: .seconds(3600)))),
        (#"h3=":443";ma="60""#, .http3(AltSvcAlternative(host: nil, port: 443, maxAge: .seconds(60)))),
        (#"h3-29=":443"; ma=3600, h3=":4433"; ma=10; persist=1"#, .http3(AltSvcAlternative(host: nil, port: 4433, maxAge: .seconds(10)))),
        (#"h2="alt.example:443", h3="Alt.Example:443""#, .http3(AltSvcAlternative(host: "alt.example", port: 443, maxAge: day))),
        (#"h3="[::1]:443""#, .http3(AltSvcAlternative(host: "[::1]", port: 443, maxAge: day))),
        ("clear", .clear),
        (" clear ", .clear),
        (#"h2=":443""#, .none),
        (#"h3=":0""#, .none),
        (#"h3=":65536""#, .none),
        (#"h3=":443"; ma=-1"#, .none),
        (#"h3=":443"; ma=soon"#, .none),
        (#"h3=443"#, .none),
        (#"h3="bad host:443""#, .none),
        (#"h3="a,b:443""#, .none),
        ("", .none),
        ("garbage;;;,,,", .none),
    ]

    @Test("an Alt-Svc field's h3 alternative, clear, or nothing usable", arguments: fields)
    func parses(field: String, expected: AltSvcHeader) {
        #expect(AltSvcHeader(parsing: field) == expected)
    }

    @Test("only the first alternatives of a long field are read")
    func longFieldsAreBounded() {
        let noise = Array(repeating: #"h2=":443""#, count: AltSvcHeader.maximumAlternatives).joined(separator: ", ")
        #expect(AltSvcHeader(parsing: noise + #", h3=":443""#) == .none)
        #expect(AltSvcHeader(parsing: #"h3=":443", "# + noise) != .none)
    }

    /// (state, event, next state), at instants in seconds from `start`.
    @Test("an origin's entry: advertised, expired, cleared, broken and forgiven")
    func stateMachine() {
        let start = ContinuousClock.now
        func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }
        let port443 = AltSvcAlternative(host: nil, port: 443, maxAge: .seconds(100))
        let forever = AltSvcAlternative(host: nil, port: 443, maxAge: .seconds(Int.max))
        let zero = AltSvcAlternative(host: nil, port: 443, maxAge: .zero)
        let advertised = AltSvcState.advertised(port443, expires: at(100))
        let broken = AltSvcState.broken(until: at(300))
        let cases: [(AltSvcState, AltSvcState.Event, AltSvcState)] = [
            (.unknown, .header(.http3(port443), at: at(0)), advertised),
            (.unknown, .header(.http3(forever), at: at(0)), .advertised(forever, expires: at(86_400))),
            (.unknown, .header(.http3(zero), at: at(0)), .unknown),
            (.unknown, .header(.clear, at: at(0)), .unknown),
            (.unknown, .header(.none, at: at(0)), .unknown),
            (.unknown, .lookedUp(at: at(5)), .unknown),
            (advertised, .lookedUp(at: at(99)), advertised),
            (advertised, .lookedUp(at: at(100)), .unknown),
            (advertised, .header(.none, at: at(50)), advertised),
            (advertised, .header(.clear, at: at(50)), .unknown),
            (advertised, .header(.http3(port443), at: at(50)), .advertised(port443, expires: at(150))),
            (advertised, .alternativeFailed(at: at(0)), broken),
            (broken, .header(.http3(port443), at: at(299)), broken),
            (broken, .lookedUp(at: at(299)), broken),
            (broken, .lookedUp(at: at(300)), .unknown),
            (broken, .header(.http3(port443), at: at(300)), .advertised(port443, expires: at(400))),
            (broken, .alternativeFailed(at: at(10)), .broken(until: at(310))),
        ]
        for (state, event, expected) in cases {
            #expect(state.handle(event) == expected, "\(state) + \(event)")
        }
        #expect(advertised.alternative == port443)
        #expect(broken.alternative == nil)
    }

    @Test("a transport's alternatives: per origin, for https only, at most a bounded number of origins")
    func cache() throws {
        let cache = CurlAlternativeServices()
        let start = ContinuousClock.now
        let origin = try #require(CurlAlternativeServices.Origin(URL(string: "https://Example.test/a")!))
        #expect(CurlAlternativeServices.Origin(URL(string: "http://example.test/")!) == nil)
        #expect(origin == CurlAlternativeServices.Origin(URL(string: "https://example.test:443/b")!))
        #expect(origin != CurlAlternativeServices.Origin(URL(string: "https://example.test:8443/")!))

        cache.learn(AltSvcHeader(parsing: #"h3=":4433"; ma=60"#), for: origin, at: start)
        #expect(cache.alternative(for: origin, at: start + .seconds(59))?.port == 4433)
        #expect(cache.alternative(for: origin, at: start + .seconds(60)) == nil)
        #expect(cache.count == 0)

        cache.learn(AltSvcHeader(parsing: #"h3=":4433""#), for: origin, at: start)
        cache.alternativeFailed(for: origin, at: start)
        cache.learn(AltSvcHeader(parsing: #"h3=":4433""#), for: origin, at: start + .seconds(1))
        #expect(cache.alternative(for: origin, at: start + .seconds(2)) == nil)
        cache.learn(AltSvcHeader(parsing: #"h3=":4433""#), for: origin, at: start + AltSvcState.brokenPeriod)
        #expect(cache.alternative(for: origin, at: start + AltSvcState.brokenPeriod)?.port == 4433)

        for index in 0..<(CurlAlternativeServices.maximumOrigins * 2) {
            let other = try #require(CurlAlternativeServices.Origin(URL(string: "https://host\(index).test/")!))
            cache.learn(AltSvcHeader(parsing: #"h3=":443"; ma=\#(1000 + index)"#), for: other, at: start)
        }
        #expect(cache.count == CurlAlternativeServices.maximumOrigins)
        // The newest advertisements are kept, the ones that end first went.
        let last = try #require(CurlAlternativeServices.Origin(URL(string: "https://host\(CurlAlternativeServices.maximumOrigins * 2 - 1).test/")!))
        #expect(cache.alternative(for: last, at: start) != nil)
        let first = try #require(CurlAlternativeServices.Origin(URL(string: "https://host0.test/")!))
        #expect(cache.alternative(for: first, at: start) == nil)
    }
}
