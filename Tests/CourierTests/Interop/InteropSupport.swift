import Foundation
import Testing

/// Real servers started by `.ci/run` (`.ci/start-servers.sh`); tests skip with a printed reason when absent.
enum InteropServer {
    static let httpbin = url("COURIER_HTTPBIN_URL")
    static let nginx = url("COURIER_NGINX_URL")
    static let nginxHTTPS = url("COURIER_NGINX_HTTPS_URL")
    static let testCA = ProcessInfo.processInfo.environment["COURIER_TEST_CA_FILE"].map { URL(fileURLWithPath: $0) }

    private static func url(_ variable: String) -> URL? {
        guard let value = ProcessInfo.processInfo.environment[variable], let url = URL(string: value) else {
            print("SKIPPED interop tests that need \(variable): it is not set (run .ci/start-servers.sh, as .ci/run does).")
            return nil
        }
        return url
    }
}
