import ContextHostTestSupport
import Foundation
import Testing

/// The committed fuzz seeds (Fuzz/corpus/), replayed once through the fuzz targets' replay drivers
/// (built by a normal `swift build`, without the fuzzer runtime), so a regression input that once
/// crashed keeps being run by the normal suite. Each input has a time and memory limit, as under
/// libFuzzer: a seed that hangs or balloons fails (the debug build is ~10x slower than the release
/// fuzz build, whose limit is 1 s and 512 MB).
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    @Test("every seed runs through its target without a crash", arguments: [
        ("framing-fuzzer", "framing"), ("manifest-fuzzer", "manifest"), ("health-export-fuzzer", "health-export"),
        ("health-csv-fuzzer", "health-csv"), ("price-csv-fuzzer", "price-csv"), ("calendar-fuzzer", "calendar"), ("caldav-xml-fuzzer", "caldav-xml"),
        ("gazetteer-fuzzer", "gazetteer"), ("coordinate-fuzzer", "coordinate"), ("sdk-json-fuzzer", "sdk-json"), ("ctxui-fuzzer", "ctxui"),
        ("elf-fuzzer", "elf"),
        ("signature-fuzzer", "signature"),
        ("bundle-fuzzer", "bundle"),
        ("protocol-fuzzer", "protocol"),
    ])
    func replay(_ target: String, _ corpus: String) throws {
        let (status, text) = try Self.run(target, ["-timeout=\(Self.timeoutSeconds)", "-rss_limit_mb=\(Self.rssLimitMB)", BuildProducts.packageRoot + "/Fuzz/corpus/" + corpus])
        #expect(status == 0, "\(text)")
        #expect(text.contains("\(target): replayed"), "\(text)")
    }

    /// Runs a replay driver; its exit status and stdout.
    static func run(_ target: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let executable = BuildProducts.directory + "/" + target
        try #require(FileManager.default.fileExists(atPath: executable), "\(executable) is missing: run 'swift build' first")
        return try Shell.runProgram(executable, arguments)
    }

    /// Per input, in the debug build.
    static let timeoutSeconds = 10
    static let rssLimitMB = 1024

    @Test("a series in zones whose rules start in 1601 asks its offsets in a year's expansion each, not one per instant (fuzz timeout of 28 Nov: 5.1 s in the debug build before)")
    func zoneLookupsPerYear() throws {
        // The calendar-fuzzer input that took 1.5 s in the release fuzz build (over its 1 s
        // limit): three weekly series whose instants fall outside the zone tables (1900–2200)
        // of thirteen VTIMEZONEs from 1601, each instant expanding the zone's yearly rules again.
        let seed = BuildProducts.packageRoot + "/Fuzz/corpus/calendar/timeout-vtimezone-1601-weekly-lookups.ics"
        let (status, text) = try Self.run("calendar-fuzzer", ["-timeout=2", seed])
        #expect(status == 0, "exit \(status) (70: over 2 s in the debug build): \(text)")
    }

    @Test("series in Outlook zones from 1601 read their offsets outside the zone tables from a per-year table (fuzz timeout of 28 Nov: 1.11 s of CPU in the release fuzz build before, 0.30 s after)")
    func zoneOffsetsOutsideTheTable() throws {
        // Each offset outside the zone's 1900–2200 table asked every part of the zone for its last
        // change, copying the part and its rule each time; now one table per UTC year answers.
        for seed in ["timeout-vtimezone-1601-outlook-zones-out-of-table.ics", "timeout-vtimezone-1601-outlook-zones-2.ics"] {
            let path = BuildProducts.packageRoot + "/Fuzz/corpus/calendar/" + seed
            let (status, text) = try Self.run("calendar-fuzzer", ["-timeout=3", path])
            #expect(status == 0, "\(seed): exit \(status) (70: over 3 s in the debug build): \(text)")
        }
    }

    @Test("the replay driver enforces its memory limit: a 1 MB limit fails on the first input, naming it")
    func memoryLimitEnforced() throws {
        let (status, text) = try Self.run("sdk-json-fuzzer", ["-rss_limit_mb=1", BuildProducts.packageRoot + "/Fuzz/corpus/sdk-json"])
        #expect(status == 71, "\(text)")
        #expect(text.contains("replay: rss limit: the peak resident memory reached") && text.contains("Fuzz/corpus/sdk-json/"), "\(text)")
    }
}
