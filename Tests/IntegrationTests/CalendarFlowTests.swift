import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Calendar provider through the real `context-host` and the default manifests folder:
/// initialize → providers/list → collect/start → collect/query → collect/submit → items/preview →
/// items/detail → items/describe → items/encode (JSON and text/calendar) → collect/make.
@Suite("Calendar flow through context-host")
struct CalendarFlowTests {
    @Test("collect → preview → detail → encode with the bundled sample calendars")
    func fullFlow() throws {
        // Pin the clock and the display zone; the calendars are the manifest's default samples.
        let config = try TemporaryDirectory()
        let configFile = try config.write(
            "host.yaml",
            """
            providers:
              com.contexthost.calendar:
                settings:
                  now: "2025-03-01T00:00:00Z"
                  timeZone: Europe/Berlin
                  windowDays: 30

            """)
        let client = try RPCClient(arguments: ["serve", "--no-watch", "--config", configFile])
        defer { client.host.terminate() }
        try client.initialize(["clientInfo": ["name": "tests"], "locale": "de-DE"])

        let calendar = try client.availableProvider("com.contexthost.calendar")
        #expect(calendar["collection"] == "both")

        // collect/start: a search-backed choice of upcoming events.
        let start = try client.call("collect/start", ["providerId": "com.contexthost.calendar"])
        let sessionID = try #require(start["sessionId"]?.stringValue)
        let field = try #require(start["form"]?["fields"]?.arrayValue?.first)
        #expect(field["kind"] == "choice")
        #expect(field["search"] != nil)
        #expect((field["options"]?.arrayValue ?? []).count > 5)

        // collect/query: search, grouped by day in German.
        let query = try client.call(
            "collect/query", ["sessionId": .string(sessionID), "fieldId": "event", "query": "offsite"])
        let options = query["options"]?.arrayValue ?? []
        let offsite = try #require(options.first { $0["label"] == "Team offsite" })
        #expect(offsite["detail"] == "24.–26. März · Work (Google)")

        // collect/submit: the item.
        let item = try client.submitForItem(session: .string(sessionID), values: ["event": offsite["value"] ?? .null])
        #expect(item["providerId"] == "com.contexthost.calendar")
        #expect(item["type"] == "event")
        #expect(item["content"]?["startDate"] == "2025-03-24")
        #expect(item["content"]?["isAllDay"] == true)

        // items/preview
        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["title"] == "Team offsite")
        #expect(chip["subtitle"] == "24.–26. März")
        #expect(chip["icon"] == "calendar")

        // items/detail
        let detail = try client.call("items/detail", ["item": item])
        #expect(detail["title"] == "Team offsite")
        let facts = detail["blocks"]?.arrayValue?.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []
        #expect(facts.contains { $0["label"] == "Location" && $0["value"] == "Hotel am Luisenplatz, Potsdam" })
        #expect(facts.contains { $0["label"] == "Starts" && $0["value"] == "Mo., 24. März 2025 (all day)" })

        // items/describe
        let describe = try client.call("items/describe", ["item": item])
        #expect(describe["text"]?.stringValue?.contains("Team offsite") == true)

        // items/encode: the seed's JSON fields, and text/calendar.
        let json = try client.call("items/encode", ["item": item])
        #expect(json["contentType"] == "application/json")
        let seed = try JSONValue(parsing: Array(try #require(Data(base64Encoded: json["data"]?.stringValue ?? ""))))
        #expect(seed["title"] == "Team offsite")
        #expect(seed["formattedDateRange"] == "24.–26. März")
        #expect(seed["identifier"] == "offsite-2025@google.com")
        let ics = try client.call("items/encode", ["item": item, "representation": "ics"])
        #expect(ics["contentType"] == "text/calendar; charset=utf-8")
        let text = String(decoding: try #require(Data(base64Encoded: ics["data"]?.stringValue ?? "")), as: UTF8.self)
        #expect(text.hasPrefix("BEGIN:VCALENDAR\r\n"))
        #expect(text.contains("BEGIN:VEVENT\r\n"))
        #expect(text.contains("UID:offsite-2025@google.com\r\n"))
        #expect(text.contains("DTSTART;VALUE=DATE:20250324\r\n"))

        // collect/make: the next upcoming event, programmatically.
        let made = try client.call("collect/make", ["providerId": "com.contexthost.calendar"])
        #expect(made["item"]?["type"] == "event")
        #expect(made["item"]?["content"]?["startDate"]?.stringValue?.hasPrefix("2025-03-0") == true)

        #expect(try client.shutdown() == 0)
    }
}
