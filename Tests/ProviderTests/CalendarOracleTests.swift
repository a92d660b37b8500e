import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The provider's expansion of the sample calendars (Google, Apple/iCloud, Outlook/Exchange,
/// Fastmail/Thunderbird styles) must equal, value for value, what an independent implementation
/// (Python icalendar 7.3.0 + recurring-ical-events 3.8.2, run by
/// `data/calendar/oracle/make-oracle.py`) wrote to `data/calendar/oracle/*.json`.
@Suite("Calendar provider: expansion matches the icalendar/recurring-ical-events oracle")
struct CalendarOracleTests {
    struct Row: Hashable, Comparable, CustomStringConvertible {
        var start: String
        var end: String
        var uid: String
        var summary: String
        static func < (a: Row, b: Row) -> Bool { (a.start, a.end, a.uid, a.summary) < (b.start, b.end, b.uid, b.summary) }
        var description: String { "\(start)…\(end) \(summary) [\(uid)]" }
    }

    @Test(
        "every occurrence in the oracle window, and nothing else",
        arguments: ["google-work", "apple-personal", "outlook-team", "fastmail-family"])
    func matchesOracle(name: String) async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(CalendarTest.oracle)/\(name).json"))
        let oracle = try JSONValue(parsing: Array(data))
        #expect(oracle["window"]?["start"] == "2025-02-15T00:00:00Z")
        #expect(oracle["window"]?["end"] == "2025-05-15T00:00:00Z")
        let expected = (oracle["occurrences"]?.arrayValue ?? []).map { row in
            Row(
                start: row["start"]?.stringValue ?? "", end: row["end"]?.stringValue ?? "",
                uid: row["uid"]?.stringValue ?? "", summary: row["summary"]?.stringValue ?? "")
        }.sorted()
        #expect(expected.count > 10)

        // The window [2025-02-15, 2025-05-15) is 89 days; floating times read in UTC.
        let harness = try CalendarTest.provider(
            calendars: "\(CalendarTest.samples)/\(name).ics", now: "2025-02-15T00:00:00Z", windowDays: 89)
        let options = try await CalendarTest.options(harness)
        var actual: [Row] = []
        for option in options {
            let item = try await CalendarTest.item(harness, value: option["value"] ?? .null)
            let content = item["content"] ?? .null
            actual.append(
                Row(
                    start: content["startDate"]?.stringValue ?? "", end: content["endDate"]?.stringValue ?? "",
                    uid: content["identifier"]?.stringValue ?? "", summary: content["title"]?.stringValue ?? ""))
        }
        actual.sort()
        let missing = expected.filter { !actual.contains($0) }
        let extra = actual.filter { !expected.contains($0) }
        #expect(missing.isEmpty, "missing: \(missing)")
        #expect(extra.isEmpty, "extra: \(extra)")
        #expect(actual == expected)
    }
}
