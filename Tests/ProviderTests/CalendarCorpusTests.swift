import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Calendar provider on 179 real-world and regression-test calendars (`data/calendar/corpus`,
/// sources and licences in `data/calendar/README.md`), compared occurrence by occurrence with an
/// independent implementation: Python icalendar + recurring-ical-events, pinned in
/// `scripts/test-requirements.txt` and installed by `scripts/test-venv.sh` into a test-only venv.
/// The provider side is `calendar-expand`, which runs the provider's own reading and expansion.
///
/// Reproduce by hand:
///
///     venv="$(scripts/test-venv.sh | tail -1)"
///     "$venv/bin/python" data/calendar/oracle/corpus-oracle.py --start 1995-01-01 --end 2031-01-01 data/calendar/corpus/*.ics > /tmp/oracle.json
///     .build/debug/calendar-expand --start 1995-01-01 --end 2031-01-01 data/calendar/corpus/*.ics > /tmp/provider.json
///     "$venv/bin/python" data/calendar/oracle/compare.py /tmp/oracle.json /tmp/provider.json
@Suite("Calendar provider: real-world corpus against icalendar + recurring-ical-events")
struct CalendarCorpusTests {
    static let root = BuildProducts.packageRoot
    /// Files whose difference from the oracle is known and justified in
    /// docs/providers/calendar.md ("Differences from the reference implementation").
    static let knownDifferences: Set<String> = []

    /// Runs a program with its standard output in a file; answers the exit status and the output.
    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, Data, String) {
        let directory = try TemporaryDirectory()
        let outputPath = directory.path + "/out"
        let errorPath = directory.path + "/err"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        process.waitUntilExit()
        let output = try Data(contentsOf: URL(fileURLWithPath: outputPath))
        let error = String(decoding: try Data(contentsOf: URL(fileURLWithPath: errorPath)), as: UTF8.self)
        return (process.terminationStatus, output, error)
    }

    @Test("at least 98% of the files the oracle reads give the same occurrences; the rest are the documented ones")
    func corpusMatchesOracle() throws {
        let venv = ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? Self.root + "/.build/test-venv"
        let python = venv + "/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the test-only Python venv is missing at \(venv): run scripts/test-venv.sh (scripts/test.sh does)")
        let corpus = Self.root + "/data/calendar/corpus"
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { $0.hasSuffix(".ics") }.sorted()
            .map { corpus + "/" + $0 }
        #expect(files.count >= 60)
        let window = ["--start", "1995-01-01", "--end", "2031-01-01"]
        let scratch = try TemporaryDirectory()

        let (oracleStatus, oracle, oracleErrors) = try Self.run(python, [Self.root + "/data/calendar/oracle/corpus-oracle.py"] + window + files)
        try #require(oracleStatus == 0, "corpus-oracle.py failed: \(oracleErrors.suffix(2000))")
        try oracle.write(to: URL(fileURLWithPath: scratch.path + "/oracle.json"))

        // The provider reads every file, those the oracle cannot read included, without a crash.
        let (providerStatus, provider, providerErrors) = try Self.run(BuildProducts.directory + "/calendar-expand", window + files)
        try #require(providerStatus == 0, "calendar-expand failed: \(providerErrors.suffix(2000))")
        try provider.write(to: URL(fileURLWithPath: scratch.path + "/provider.json"))

        let (compareStatus, _, compareErrors) = try Self.run(
            python,
            [Self.root + "/data/calendar/oracle/compare.py", scratch.path + "/oracle.json", scratch.path + "/provider.json",
             "--json", scratch.path + "/comparison.json", "--quiet"])
        try #require(compareStatus == 0, "compare.py failed: \(compareErrors)")
        let comparison = try JSONValue(parsing: Array(Data(contentsOf: URL(fileURLWithPath: scratch.path + "/comparison.json"))))
        let summary = try #require(comparison["summary"])
        let compared = try #require(summary["files"]?.intValue)
        let identical = try #require(summary["identical"]?.intValue)
        #expect(compared >= 60, "the oracle read only \(compared) files")
        #expect(Double(identical) >= 0.98 * Double(compared), "\(identical) of \(compared) files identical")

        var different: [String] = []
        for (name, entry) in comparison["files"]?.objectValue ?? [:] {
            let status = entry["status"]?.stringValue
            if status == "same" || status == "oracle-error" { continue }
            different.append(name)
            if !Self.knownDifferences.contains(name) {
                Issue.record("\(name): \(status ?? "?"), missing \(entry["missing"] ?? .null), extra \(entry["extra"] ?? .null)")
            }
        }
        #expect(Set(different) == Self.knownDifferences, "the documented differences changed: \(different.sorted())")
    }
}
