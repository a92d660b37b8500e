import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Calendar provider on 491 real-world and regression-test calendars from thirteen projects'
/// test data (`data/calendar/corpus`, sources and licences in `data/calendar/README.md`), compared
/// occurrence by occurrence with an
/// independent implementation: Python icalendar + recurring-ical-events, pinned in
/// `scripts/test-requirements.txt` and installed by `scripts/test-venv.sh` into a test-only venv.
/// The provider side is `calendar-expand`, which runs the provider's own reading and expansion.
///
/// Nothing is dropped from the comparison unnoticed: the files the reference cannot read are
/// pinned in `data/calendar/oracle/not-compared.tsv` and the deliberate differences, each with
/// its reason, in `known-differences.tsv`; a change to either set either way, an oracle child
/// that times out or crashes, or a program that runs past `timeout` fails the test.
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
    static let oracleFolder = root + "/data/calendar/oracle"
    /// How long each program may run; past it the test fails (a timeout is never an outcome).
    static let timeout: Duration = .seconds(600)

    /// A pinned list, one file name per line followed by a tab and why (lines starting with `#`
    /// and empty lines are comments): `data/calendar/oracle/<name>`.
    static func pinned(_ name: String) throws -> [String: String] {
        let text = try String(contentsOfFile: oracleFolder + "/" + name, encoding: .utf8)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = line.split(separator: "\t", maxSplits: 1)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return result
    }

    /// Runs a program with its standard output in a file; answers the exit status and the output.
    /// Fails (and kills it) when it runs longer than `timeout`.
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
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning, clock.now < deadline { usleep(50_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw CalendarTest.Failure("\(executable) \(arguments.prefix(2)) … ran longer than \(timeout); killed (a timeout is a failure)")
        }
        process.waitUntilExit()
        let output = try Data(contentsOf: URL(fileURLWithPath: outputPath))
        let error = String(decoding: try Data(contentsOf: URL(fileURLWithPath: errorPath)), as: UTF8.self)
        return (process.terminationStatus, output, error)
    }

    @Test("every file the oracle reads gives the same occurrences, or is a pinned difference; the files it cannot read are exactly the pinned ones")
    func corpusMatchesOracle() throws {
        let venv = ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? Self.root + "/.build/test-venv"
        let python = venv + "/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the test-only Python venv is missing at \(venv): run scripts/test-venv.sh (scripts/test.sh does)")
        let corpus = Self.root + "/data/calendar/corpus"
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { $0.hasSuffix(".ics") }.sorted()
            .map { corpus + "/" + $0 }
        // The corpus itself is pinned: a file removed (or added) must be a visible change.
        #expect(
            files.count == Self.corpusSize,
            "data/calendar/corpus has \(files.count) .ics files, CalendarCorpusTests.corpusSize says \(Self.corpusSize): update it with data/calendar/README.md")
        let notCompared = try Self.pinned("not-compared.tsv")
        let knownDifferences = try Self.pinned("known-differences.tsv")
        let window = ["--start", "1995-01-01", "--end", "2031-01-01"]
        let scratch = try TemporaryDirectory()

        let (oracleStatus, oracle, oracleErrors) = try Self.run(python, [Self.oracleFolder + "/corpus-oracle.py"] + window + files)
        try #require(oracleStatus == 0, "corpus-oracle.py failed: \(oracleErrors.suffix(2000))")
        try oracle.write(to: URL(fileURLWithPath: scratch.path + "/oracle.json"))

        // The provider reads every file, those the oracle cannot read included, without a crash.
        let (providerStatus, provider, providerErrors) = try Self.run(BuildProducts.directory + "/calendar-expand", window + files)
        try #require(providerStatus == 0, "calendar-expand failed: \(providerErrors.suffix(2000))")
        try provider.write(to: URL(fileURLWithPath: scratch.path + "/provider.json"))

        let (compareStatus, _, compareErrors) = try Self.run(
            python,
            [Self.oracleFolder + "/compare.py", scratch.path + "/oracle.json", scratch.path + "/provider.json",
             "--json", scratch.path + "/comparison.json", "--quiet"])
        try #require(compareStatus == 0, "compare.py failed: \(compareErrors)")
        let comparison = try JSONValue(parsing: Array(Data(contentsOf: URL(fileURLWithPath: scratch.path + "/comparison.json"))))
        let summary = try #require(comparison["summary"])
        let compared = try #require(summary["files"]?.intValue)
        let identical = try #require(summary["identical"]?.intValue)

        var different: Set<String> = []
        var unreadable: Set<String> = []
        for (name, entry) in comparison["files"]?.objectValue ?? [:] {
            switch entry["status"]?.stringValue {
            case "same": continue
            case "oracle-error": unreadable.insert(name)
            case "oracle-failure":
                // A timed-out or crashed oracle child is a failed run, never a smaller denominator.
                Issue.record("\(name): the oracle failed (\(entry["oracleFailure"]?.stringValue ?? "?")): \(entry["oracleError"]?.stringValue ?? "")")
            case "different":
                different.insert(name)
                if knownDifferences[name] == nil {
                    Issue.record("\(name): different, missing \(entry["missing"] ?? .null), extra \(entry["extra"] ?? .null)")
                }
            case let status:
                Issue.record("\(name): \(status ?? "no status")")
            }
        }
        let update = "if the change is right, update data/calendar/oracle/not-compared.tsv (file<TAB>the oracle's error; see data/calendar/README.md)"
        #expect(
            unreadable.subtracting(notCompared.keys).isEmpty,
            "the oracle cannot read files it is not pinned as unable to read: \(unreadable.subtracting(notCompared.keys).sorted()); \(update)")
        #expect(
            Set(notCompared.keys).subtracting(unreadable).isEmpty,
            "pinned as unreadable by the oracle but now read or gone: \(Set(notCompared.keys).subtracting(unreadable).sorted()); \(update)")
        #expect(
            Set(knownDifferences.keys).subtracting(different).isEmpty,
            "known differences that are no longer different (or gone): \(Set(knownDifferences.keys).subtracting(different).sorted()); remove them from data/calendar/oracle/known-differences.tsv")
        // The denominator: every file is compared except the pinned unreadable ones.
        #expect(compared == files.count - notCompared.count, "compared \(compared) of \(files.count) files, \(notCompared.count) pinned as unreadable")
        #expect(Double(identical) >= 0.95 * Double(compared), "\(identical) of \(compared) files identical")
    }

    /// The number of `.ics` files in `data/calendar/corpus` (listed in `data/calendar/README.md`).
    static let corpusSize = 491
}
