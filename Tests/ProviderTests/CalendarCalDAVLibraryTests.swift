import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The real `libCalendarProvider.so` with a CalDAV account, loaded by the test harness, which
/// answers no host request (`host/fetch` gets "method not found"), so the library cannot reach
/// any server: it must serve the cache in its data folder (written here in the format
/// `CalDAVCache` writes; Tests/CalDAVTests make it through a real Radicale sync) as offline, with
/// its age on the chip, and without a cache say why it has no events. (Through the real host and
/// its broker: IntegrationTests/CalDAVBrokerTests.)
struct CalendarCalDAVLibraryTests {
    static let event = """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        PRODID:-//tests//EN\r
        BEGIN:VEVENT\r
        UID:standup\r
        DTSTAMP:20250101T000000Z\r
        DTSTART:20250303T090000Z\r
        DTEND:20250303T091500Z\r
        SUMMARY:Standup\r
        END:VEVENT\r
        END:VCALENDAR\r

        """

    static func harness(dataDirectory: String) throws -> ProviderHarness {
        try ProviderHarness(
            product: "CalendarProvider", providerID: CalendarTest.providerID,
            settings: [
                "calendars": .string(dataDirectory + "/none"), "now": "2025-03-01T11:00:00Z", "windowDays": 30,
                "timeZone": "UTC", "caldavURL": "http://127.0.0.1:9/", "caldavUser": "alice",
                "caldavRefreshSeconds": 0,
            ], dataDirectory: dataDirectory)
    }

    @Test func servesTheCacheOfflineWithItsAge() async throws {
        let data = try TemporaryDirectory()
        let cache: JSONValue = [
            "version": 1, "account": "http://127.0.0.1:9/|alice", "home": "/alice/", "syncedAt": 1_740_816_000,
            "calendars": [
                [
                    "href": "/alice/work/", "name": "Work", "usesQuery": false, "syncedAt": 1_740_816_000,
                    "syncToken": "http://radicale.org/ns/sync/1",
                    "resources": [["href": "/alice/work/standup.ics", "etag": "\"e1\"", "data": .string(Self.event)]],
                ]
            ],
        ]
        _ = try data.write("caldav-cache.json", cache.jsonString)
        let harness = try Self.harness(dataDirectory: data.path)
        let form = try await harness.call("collect/start", ["sessionId": "s1"])
        let field = form["fields"]?.arrayValue?.first
        let help = field?["help"]?.stringValue ?? ""
        #expect(help.contains("Offline: the CalDAV calendars are the copy from 3 h ago."))
        #expect(help.contains("Host method not found: host/fetch"), "\(help)")
        #expect(field?["options"]?.arrayValue?.compactMap { $0["label"]?.stringValue } == ["Standup"])
        let item = try await CalendarTest.item(harness, titled: "Standup")
        #expect(item["content"]?["offline"] == true)
        #expect(item["content"]?["calendar"] == "Work")
        let chip = try await harness.call("item/preview", ["item": item])
        #expect(chip["subtitle"]?.stringValue == "Mon, Mar 3, 9:00 – 9:15 AM · offline copy, 3 h old")
        #expect(chip["tone"] == "warning")
    }

    /// Control: without a cache the same settings have no events, and the error says why.
    @Test func withoutACacheSaysWhy() async throws {
        let data = try TemporaryDirectory()
        let harness = try Self.harness(dataDirectory: data.path)
        do {
            _ = try await harness.call("collect/start", ["sessionId": "s1"])
            Issue.record("collect/start answered without a calendar")
        } catch let error as ProviderHarness.CallError {
            #expect(error.message.contains("CalDAV: Host method not found: host/fetch"), "\(error.message)")
        }
    }
}
