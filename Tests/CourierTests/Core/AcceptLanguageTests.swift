import Testing
import Foundation
@testable import Courier
import CourierTestServer

/// The default `Accept-Language` says what the process's locale says, and nothing under C/POSIX.
@Suite struct AcceptLanguageTests {
    @Test(arguments: [
        (["LANG": "de_DE.UTF-8"], "de-DE"),
        (["LANG": "fr_CA"], "fr-CA"),
        (["LANG": "pt"], "pt"),
        (["LANG": "en_GB.UTF-8@euro"], "en-GB"),
        (["LANG": "de_DE.UTF-8", "LC_MESSAGES": "ja_JP.UTF-8"], "ja-JP"),
        (["LANG": "de_DE.UTF-8", "LC_MESSAGES": "ja_JP.UTF-8", "LC_ALL": "it_IT.UTF-8"], "it-IT"),
        (["LANG": "de_DE.UTF-8", "LC_ALL": ""], "de-DE"),
        (["LANG": "fr_FR.UTF-8", "LANGUAGE": "fr:en_GB:en"], "fr, en-GB;q=0.9, en;q=0.8"),
    ])
    func aLocaleGivesItsLanguage(environment: [String: String], expected: String) {
        #expect(AcceptLanguage.value(environment: environment) == expected)
    }

    @Test(arguments: [
        [String: String](), ["LANG": "C"], ["LANG": "C.UTF-8"], ["LANG": "POSIX"], ["LC_ALL": "C", "LANG": "de_DE.UTF-8"],
        ["LANG": "C.UTF-8", "LANGUAGE": "fr:en"], ["LANG": ""],
    ])
    func aCOrPOSIXLocaleGivesNone(environment: [String: String]) {
        #expect(AcceptLanguage.value(environment: environment) == nil, "\(environment)")
    }

    /// What this test process sends is what its own locale says; under C, no header at all.
    @Test(arguments: TransportUnderTest.available)
    func theSessionSendsWhatTheProcessLocaleSays(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("x"))
            _ = try await makeSession(transport, server: server).request("x").serializingData().value
            let recorded = try await server.takeRequest()
            #if os(Linux)
            let expected = AcceptLanguage.value(environment: ProcessInfo.processInfo.environment)
            #else
            let expected = AcceptLanguage.value(languages: Locale.preferredLanguages)
            #endif
            // Under a C locale Courier sends none; FoundationNetworking (URLSession on Linux) then adds its own.
            if transport == .curl || expected != nil {
                #expect(recorded.headers["Accept-Language"] == expected)
            }
            #expect(HTTPHeaders.default.contains("Accept-Language") == (expected != nil))
        }
    }
}
