import Foundation
import Testing
@testable import CalendarProvider

/// The bounded XML reader of CalDAV answers, on real Radicale answers and hostile documents
/// (the same files seed `caldav-xml-fuzzer`: Fuzz/corpus/caldav-xml/).
struct CalDAVXMLTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/Fuzz/corpus/caldav-xml/" + name)))
    }

    @Test("XML character data and iCalendar TEXT values escape their special characters and keep the rest")
    func escaping() {
        #expect(CalDAVClient.escape("<a href=\"x\">Tom & Jerry's</a>") == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry's&lt;/a&gt;")
        #expect(ICSText.escape("Lunch; plates, cups\\napkins\nand\r more") == "Lunch\\; plates\\, cups\\\\napkins\\nand more")
        #expect(ICSText.escape("Zürich café") == "Zürich café")
    }

    @Test func readsRadicaleAnswers() throws {
        let multiget = try Multistatus(try XMLReader.parse(try Self.fixture("radicale-multiget.xml")))
        #expect(multiget.responses.count == 1)
        #expect(multiget.responses.first?.href == "/alice/work/e1.ics")
        let data = multiget.responses.first?.property(Multistatus.caldav, "calendar-data")?.text ?? ""
        #expect(data.contains("SUMMARY:Standup"))
        let list = try Multistatus(try XMLReader.parse(try Self.fixture("radicale-calendars.xml")))
        let work = try #require(list.responses.first { $0.href == "/alice/work/" })
        #expect(work.property(Multistatus.dav, "resourcetype")?.child(Multistatus.caldav, "calendar") != nil)
        #expect(
            work.property(Multistatus.caldav, "supported-calendar-component-set")?.children(Multistatus.caldav, "comp")
                .compactMap { $0.attributes["name"] } == ["VTODO", "VEVENT", "VJOURNAL"])
        let removed = try Multistatus(try XMLReader.parse(try Self.fixture("radicale-sync-removed.xml")))
        #expect(removed.syncToken?.hasPrefix("http://radicale.org/ns/sync/") == true)
        #expect(removed.responses.first?.status == 404)
    }

    @Test func readsPrefixesEntitiesAndCDATA() throws {
        let answer = try Multistatus(try XMLReader.parse(try Self.fixture("entities-and-cdata.xml")))
        #expect(answer.syncToken == "t&1")
        #expect(answer.responses.count == 3)
        let data = answer.responses[0].property(Multistatus.caldav, "calendar-data")?.text ?? ""
        // CDATA is kept as written: no references are expanded inside it.
        #expect(data.contains("UID:&#x41;&#65;"))
        #expect(answer.responses[2].property(Multistatus.caldav, "calendar-data")?.text == "BEGIN:VCALENDAR\r\nEND:VCALENDAR")
        // An href on another origin is not followed (it would get the password).
        let base = try #require(DAVURL("https://example.org/calendars/user/"))
        #expect(base.resolve(answer.responses[0].href) == nil)
        #expect(CalDAVClient.resources(answer, base).map(\.href) == ["/ok.ics"])
        #expect(base.resolve("https://example.org:443@evil.example/x") == nil)
        #expect(base.resolve("//evil.example/x") == nil)
    }

    /// Billion laughs: the document really expands (Python's expat, the control) — ours refuses
    /// the DOCTYPE before any entity is declared.
    @Test func refusesEntityDeclarations() throws {
        let bytes = try Self.fixture("billion-laughs.xml")
        let control = Process()
        control.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        control.arguments = [
            "python3", "-c",
            "import sys, xml.etree.ElementTree as E; r = E.fromstring(sys.stdin.buffer.read()); print(len(''.join(r.itertext())))",
        ]
        let input = Pipe()
        let output = Pipe()
        control.standardInput = input
        control.standardOutput = output
        try control.run()
        input.fileHandleForWriting.write(Data(bytes))
        try? input.fileHandleForWriting.close()  // no throw between run() and waitUntilExit()
        let expanded = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        control.waitUntilExit()
        #expect(expanded.trimmingCharacters(in: .whitespacesAndNewlines) == "3003", "the control parser expands lol4 to 1,000 lols")

        for name in ["billion-laughs.xml", "xxe.xml"] {
            let error = try #require(throws: XMLError.self) { try XMLReader.parse(try Self.fixture(name)) }
            #expect(error.reason == "document type declarations (<!DOCTYPE) are not accepted in a server answer")
        }
    }

    @Test func capsDepthWithControl() throws {
        let bytes = try Self.fixture("deep.xml")
        let error = try #require(throws: XMLError.self) { try XMLReader.parse(bytes) }
        #expect(error.reason == "elements are nested more than 48 deep")
        // Control: the same document with a higher cap parses (it is 101 deep).
        var limits = XMLReader.Limits()
        limits.maximumDepth = 200
        let root = try XMLReader.parse(bytes, limits: limits)
        #expect(CalDAVCheck.depth(root) == 101)
        // And 100,000 levels do not overflow the stack.
        let deep = Array(("<a>" + String(repeating: "<a>", count: 100_000)).utf8)
        #expect(throws: XMLError.self) { try XMLReader.parse(deep) }
    }

    @Test func refusesBadReferencesAndStructure() throws {
        for reference in ["&#0;", "&#xD800;", "&#x110000;", "&#99999999999;", "&unknown;", "&amp", "&#x;"] {
            #expect(throws: XMLError.self, "\(reference)") { try XMLReader.parse(Array("<a>\(reference)</a>".utf8)) }
        }
        #expect(throws: XMLError.self) { try XMLReader.parse(try Self.fixture("mismatched.xml")) }
        #expect(throws: XMLError.self) { try XMLReader.parse(Array("<p:a/>".utf8)) }
        #expect(throws: XMLError.self) { try XMLReader.parse(Array("<a></a><b/>".utf8)) }
        #expect(throws: XMLError.self) { try XMLReader.parse(Array("<a x='1".utf8)) }
        #expect(throws: XMLError.self) { try XMLReader.parse([]) }
        var small = XMLReader.Limits()
        small.maximumBytes = 10
        #expect(throws: XMLError.self) { try XMLReader.parse(Array("<a>0123456789</a>".utf8), limits: small) }
        small = XMLReader.Limits()
        small.maximumElements = 3
        #expect(throws: XMLError.self) { try XMLReader.parse(Array("<a><b/><b/><b/></a>".utf8), limits: small) }
        // Every committed seed runs through the fuzz entry without a trap.
        for name in try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/Fuzz/corpus/caldav-xml") {
            CalDAVCheck.fuzz(try Self.fixture(name))
        }
    }
}
