import ContextHostTestSupport
import ContextProviderKit
import Foundation

/// Shared helpers for the Calendar provider tests: every call goes through the real
/// `libCalendarProvider.so` (ProviderHarness).
enum CalendarTest {
    static let providerID = "com.contexthost.calendar"
    static let samples = BuildProducts.packageRoot + "/data/calendar/samples"
    static let oracle = BuildProducts.packageRoot + "/data/calendar/oracle"

    /// A harness with the given settings; `now` and `timeZone` default to a fixed instant and UTC so
    /// results do not depend on the clock or the machine.
    static func provider(
        calendars: String = samples, now: String = "2025-03-01T00:00:00Z", windowDays: Int = 30,
        timeZone: String = "UTC", locale: String = "en-US", extra: JSONObject = [:]
    ) throws -> ProviderHarness {
        var settings: JSONObject = [
            "calendars": .string(calendars), "now": .string(now), "windowDays": .number(Double(windowDays)),
            "timeZone": .string(timeZone),
        ]
        for (key, value) in extra { settings[key] = value }
        return try ProviderHarness(product: "CalendarProvider", providerID: providerID, settings: settings, locale: locale)
    }

    /// `collect/query` options for `text`.
    static func options(_ harness: ProviderHarness, _ text: String = "") async throws -> [JSONValue] {
        let result = try await harness.call(
            "collect/query", ["sessionId": "s1", "stepId": "event", "fieldId": "event", "query": .string(text)])
        return result["options"]?.arrayValue ?? []
    }

    /// Submits one option's value; answers the item.
    static func item(_ harness: ProviderHarness, value: JSONValue) async throws -> JSONValue {
        let result = try await harness.call(
            "collect/submit", ["sessionId": "s1", "stepId": "event", "values": ["event": value]])
        guard result["outcome"] == "item", let item = result["item"] else {
            throw Failure("submit did not answer an item: \(result)")
        }
        return item
    }

    /// The first item whose title contains `title`.
    static func item(_ harness: ProviderHarness, titled title: String) async throws -> JSONValue {
        let options = try await options(harness, title)
        guard let first = options.first(where: { $0["label"]?.stringValue?.contains(title) == true }),
            let value = first["value"]
        else { throw Failure("no option titled \(title)") }
        return try await item(harness, value: value)
    }

    /// Writes a calendar file with CRLF line ends in a new folder; answers the folder.
    static func folder(_ files: [String: String]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for (name, text) in files {
            try directory.write(name, text.replacingOccurrences(of: "\n", with: "\r\n"))
        }
        return directory
    }

    /// A VCALENDAR around `body`.
    static func calendar(_ body: String) -> String {
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Tests//EN\n\(body)END:VCALENDAR\n"
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
