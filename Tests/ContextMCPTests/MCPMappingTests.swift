@testable import ContextHost
@testable import ContextMCP
import ContextProtocol
import Foundation
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("MCP bridge: names and form mapping")
struct MCPMappingTests {
    @Test("tool slugs are the id's last component, [A-Za-z0-9_] only, unique in order")
    func slugs() {
        #expect(ToolCatalog.slug(of: "com.contexthost.stock-quote") == "stock_quote")
        #expect(ToolCatalog.slug(of: "com.contexthost.device-info") == "device_info")
        #expect(ToolCatalog.slug(of: "note") == "note")
        #expect(ToolCatalog.slug(of: "com.example.Zürich café") == "Z_rich_caf_")
        #expect(ToolCatalog.slug(of: "com.example.") == "example")
        #expect(ToolCatalog.slug(of: "...") == "provider")
        #expect(ToolCatalog.slug(of: "a." + String(repeating: "x", count: 300)).count == 48)
        var used: Set<String> = []
        #expect(["note", "note", "note"].map { ToolCatalog.uniqueSlug($0, used: &used) } == ["note", "note_2", "note_3"])
    }

    static let form = ContextForm(
        stepId: "s", title: "Trip",
        fields: [
            .text(id: "name", label: "Name", required: true, maxLength: 20, pattern: "[a-z]+"),
            .number(id: "count", label: "Count", min: 1, max: 9),
            FormField(id: "where", kind: .location, label: "Where", required: true),
            .choice(id: "size", label: "Size", options: [FormOption(value: "s", label: "Small"), FormOption(value: "l", label: "Large")]),
            .choice(id: "city", label: "City", search: ChoiceSearch(minQueryLength: 2)),
            FormField(id: "ok", kind: .toggle, label: "OK"),
            FormField(id: "day", kind: .date, label: "Day"),
        ],
        fallbackText: "Trip")

    @Test("an elicitation schema is flat primitives: location as two numbers, choices titled, errors and defaults in place")
    func elicitationSchema() throws {
        let schema = FormMapping.elicitationSchema(
            Self.form, values: ["name": "abc", "where": ["latitude": 47.5, "longitude": 8.5]], errors: ["name": "Too short."])
        let properties = try #require(schema["properties"]?.objectValue)
        #expect(properties.map(\.key).sorted() == ["city", "count", "day", "name", "ok", "size", "where_latitude", "where_longitude"])
        for (_, property) in properties {
            let type = property["type"]?.stringValue
            #expect(["string", "number", "boolean"].contains(type ?? ""), "\(property)")
            #expect(property["pattern"] == nil && property["properties"] == nil)
        }
        #expect(properties["name"]?["default"] == "abc")
        #expect(properties["name"]?["description"]?.stringValue?.hasPrefix("Error: Too short.") == true)
        #expect(properties["name"]?["description"]?.stringValue?.contains("[a-z]+") == true)
        #expect(properties["where_latitude"]?["default"] == 47.5 && properties["where_longitude"]?["maximum"] == 180)
        #expect(properties["size"]?["oneOf"] == [["const": "s", "title": "Small"], ["const": "l", "title": "Large"]])
        #expect(properties["day"]?["format"] == "date")
        #expect(schema["required"] == ["name", "where_latitude", "where_longitude"])
    }

    @Test("answers and arguments become host values; the tool's input schema has no required members")
    func values() {
        let answered = FormMapping.values(
            fromElicited: ["name": "", "where_latitude": 1, "where_longitude": 2, "ok": true], form: Self.form)
        #expect(answered == ["where": ["latitude": 1, "longitude": 2], "ok": true])
        let arguments = FormMapping.values(fromArguments: ["name": "x", "unknown": 1, "city": nil], form: Self.form)
        #expect(arguments == ["name": "x"])
        #expect(FormMapping.missing(Self.form, values: ["name": "  "]).map(\.id) == ["name", "where"])
        let input = FormMapping.toolInputSchema(Self.form, searchTool: "trip_search")
        #expect(input["required"] == nil && input["type"] == "object")
        #expect(input["properties"]?["where"]?["type"] == "object")
        #expect(input["properties"]?["size"]?["enum"] == ["s", "l"])
        #expect(input["properties"]?["city"]?["description"]?.stringValue?.contains("trip_search") == true)
    }

    @Test("item URIs percent-encode the ids")
    func uris() {
        #expect(StoredItem.uri(providerID: "com.x.note", itemID: "a/b c?") == "contexthost://items/com.x.note/a%2Fb%20c%3F")
    }
}

@Suite("MCP bridge: the item store")
struct MCPItemStoreTests {
    static func item(_ id: String, _ text: String = "x") -> StoredItem {
        let item = ContextItem(id: id, providerId: "com.x.note", type: "note", displayName: text, content: ["text": .string(text)])
        return StoredItem(
            uri: StoredItem.uri(providerID: item.providerId, itemID: id), item: item, description: "Note \(text)", thumbnail: nil,
            encodings: [.json(item.content), EncodedItem(representation: .binary, contentType: "application/octet-stream", data: [0, 1, 2])])
    }

    @Test("items survive a reopen, the last save of a URI wins, a torn line is skipped, and the file is compacted")
    func persistence() throws {
        let directory = "/tmp/mcp-items-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logger = Logger(label: "test")
        do {
            let store = ItemStore(directory: directory, logger: logger)
            store.save(Self.item("a"))
            store.save(Self.item("b"))
            store.save(Self.item("a", "second"))
        }
        // A crash in the middle of a write leaves a torn last line.
        let file = directory + "/" + ItemStore.fileName
        let fd = open(file, O_WRONLY | O_APPEND)
        _ = "{\"version\":1,\"uri\":\"contexthost://items/x/torn".withCString { write(fd, $0, strlen($0)) }
        close(fd)
        let reopened = ItemStore(directory: directory, logger: logger)
        #expect(reopened.all().map(\.item.id) == ["b", "a"])
        #expect(reopened.item(uri: Self.item("a").uri)?.item.displayName == "second")
        #expect(reopened.item(uri: Self.item("b").uri) == Self.item("b"))
        // Many saves of one item: the file is rewritten instead of growing without end.
        for index in 0..<2_500 { reopened.save(Self.item("c", "\(index)")) }
        let lines = try #require(try? FileBytes.read(file)).split(separator: UInt8(ascii: "\n")).count
        #expect(lines <= 2_001, "\(lines) lines")
        #expect(ItemStore(directory: directory, logger: logger).all().map(\.item.displayName) == ["x", "second", "2499"])
    }
}
