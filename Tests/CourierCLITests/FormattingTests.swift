@testable import courier
import Foundation
import Testing

/// Progress lines, units, JSON colouring and resume figures, as pure functions.
@Suite struct FormattingTests {
    @Test func units() {
        #expect(Units.bytes(512) == "512 B")
        #expect(Units.bytes(1536) == "1.5 KiB")
        #expect(Units.bytes(200 << 20) == "200.0 MiB")
        #expect(Units.bytes(1 << 30) == "1.00 GiB")
        #expect(Units.clock(7) == "0:07")
        #expect(Units.clock(3723) == "1:02:03")
        #expect(Units.clock(.infinity) == "--:--")
        #expect(Units.rate(0) == "- B/s")
        #expect(Units.elapsed(0.0023) == "2.3 ms")
        #expect(Units.elapsed(2.44) == "2.4 s")
    }

    @Test func terminalLineShowsPercentBytesRateAndETA() {
        let sample = ProgressSample(completed: 50 << 20, total: 200 << 20, resumed: 0, elapsed: 1)
        let line = ProgressBar.terminalLine(sample, width: 100)
        #expect(line.hasPrefix(" 25% ["))
        #expect(line.contains(" 50.0 MiB / 200.0 MiB"))
        #expect(line.contains(" 50.0 MiB/s"))
        #expect(line.contains("ETA 0:03"))
        #expect(line.count <= 99)
        #expect(!line.contains("\r") && !line.contains("\n"))
    }

    @Test func terminalLineKeepsItsShapeAsNumbersChange() {
        let early = ProgressBar.terminalLine(ProgressSample(completed: 528 << 10, total: 8 << 20, resumed: 0, elapsed: 0.1), width: 80)
        let later = ProgressBar.terminalLine(ProgressSample(completed: 7 << 20, total: 8 << 20, resumed: 0, elapsed: 1.4), width: 80)
        #expect(early.count == later.count)
        #expect(early.firstIndex(of: "]") == later.firstIndex(of: "]"))
    }

    @Test func terminalLineFitsNarrowTerminals() {
        let sample = ProgressSample(completed: 1, total: 3, resumed: 0, elapsed: 1)
        for width in [1, 10, 20, 40, 60] {
            #expect(ProgressBar.terminalLine(sample, width: width).count <= max(1, width - 1))
        }
    }

    @Test func percentNeverReaches100BeforeTheEnd() {
        #expect(ProgressSample(completed: 999_999, total: 1_000_000, resumed: 0, elapsed: 1).percent == 99)
        #expect(ProgressSample(completed: 1_000_000, total: 1_000_000, resumed: 0, elapsed: 1).percent == 100)
        #expect(ProgressSample(completed: 5, total: -1, resumed: 0, elapsed: 1).percent == nil)
    }

    @Test func rateExcludesResumedBytes() {
        let sample = ProgressSample(completed: 150, total: 200, resumed: 100, elapsed: 2)
        #expect(sample.rate == 25)
        #expect(sample.eta == 2)
    }

    @Test func unknownTotalShowsBytesAndRate() {
        let sample = ProgressSample(completed: 3 << 20, total: -1, resumed: 0, elapsed: 1.5)
        let line = ProgressBar.terminalLine(sample, width: 80)
        #expect(line.contains(" 3.0 MiB") && line.contains(" 2.0 MiB/s") && !line.contains("%"))
        #expect(ProgressBar.plainLine(sample) == "progress: 3.0 MiB at 2.0 MiB/s")
    }

    @Test func finalAndPlainLines() {
        let done = ProgressSample(completed: 200 << 20, total: 200 << 20, resumed: 50 << 20, elapsed: 2)
        #expect(ProgressBar.finalLine(done) == "100% 200.0 MiB (209715200 bytes) in 2.0 s, average 75.0 MiB/s, 50.0 MiB resumed from disk")
        let midway = ProgressSample(completed: 100 << 20, total: 200 << 20, resumed: 0, elapsed: 1)
        #expect(ProgressBar.plainLine(midway) == "progress: 50% 100.0 MiB of 200.0 MiB at 100.0 MiB/s, ETA 0:01")
    }

    @Test func barCells() {
        #expect(ProgressBar.bar(ProgressSample(completed: 5, total: 10, resumed: 0, elapsed: 1), width: 10) == "#####>    ")
        #expect(ProgressBar.bar(ProgressSample(completed: 10, total: 10, resumed: 0, elapsed: 1), width: 10) == "##########")
        #expect(ProgressBar.bar(ProgressSample(completed: 0, total: 10, resumed: 0, elapsed: 1), width: 4) == ">   ")
    }

    @Test func jsonKeepsOrderAndSpellingAndIndents() throws {
        let input = Data(#"{"b":1.50,"a":[true,null,{}],"big":12345678901234567890,"s":"x\"y"}"#.utf8)
        let formatted = try #require(JSONColouring.format(input))
        #expect(
            formatted == """
                {
                  "b": 1.50,
                  "a": [
                    true,
                    null,
                    {}
                  ],
                  "big": 12345678901234567890,
                  "s": "x\\"y"
                }

                """)
    }

    @Test func jsonColours() throws {
        let formatted = try #require(JSONColouring.format(Data(#"{"k":"v","n":-1,"t":false}"#.utf8), palette: .ansi))
        #expect(formatted.contains("\u{1B}[1;34m\"k\"\u{1B}[0m: \u{1B}[32m\"v\"\u{1B}[0m"))
        #expect(formatted.contains("\u{1B}[36m-1\u{1B}[0m"))
        #expect(formatted.contains("\u{1B}[35mfalse\u{1B}[0m"))
    }

    @Test func invalidJSONIsNotFormatted() {
        #expect(JSONColouring.format(Data("{\"a\":".utf8)) == nil)
        #expect(JSONColouring.format(Data("hello".utf8)) == nil)
        #expect(JSONColouring.isJSONContentType("application/problem+json; charset=utf-8"))
        #expect(!JSONColouring.isJSONContentType("text/html"))
    }

    @Test func resumeFigures() {
        #expect(ResumeFigures.contentRangeStart("bytes 1000-1999/2000") == 1000)
        #expect(ResumeFigures.contentRangeStart("bytes */2000") == nil)
        #expect(ResumeFigures.summary(resumed: 0, size: 10) == "courier: nothing to resume; fetched 10 bytes")
        #expect(ResumeFigures.summary(resumed: 4, size: 10) == "courier: resumed 4 bytes from the download store; fetched 6 bytes")
        #expect(ResumeFigures.summary(resumed: 0, size: 10, partialBefore: 3).contains("replacing the 3 bytes on disk"))
    }

    @Test func peakMemoryParsesProcStatus() {
        #expect(PeakMemory.parse(status: "Name:\tcourier\nVmPeak:\t  999 kB\nVmHWM:\t   23964 kB\n") == 23964)
        #expect(PeakMemory.parse(status: "Name:\tx\n") == nil)
        #expect(PeakMemory.kibibytes() ?? 1 > 0)
    }

    @Test func exitCodesAreDistinctAndDocumented() {
        let codes = ExitCode.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        for code in codes { #expect(ExitCode.helpText.contains("  \(code) ")) }
    }
}
