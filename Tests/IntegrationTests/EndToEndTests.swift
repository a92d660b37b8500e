import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The whole vertical slice through the real binary and the real Note provider library.
@Suite("End to end: initialize → collect → preview/detail/encode → exit")
struct EndToEndTests {
    @Test("Note provider over both framings", arguments: [RPCClient.Framing.newlineDelimited, .contentLength])
    func noteFlow(framing: RPCClient.Framing) throws {
        let client = try RPCClient(arguments: ["serve"], framing: framing)
        defer { client.host.terminate() }

        // initialize
        let initialize = try client.initialize()
        #expect(initialize["protocolVersion"] == 2)
        #expect(initialize["serverInfo"]?["name"] == "context-host")
        let methods = initialize["capabilities"]?["methods"]?.arrayValue ?? []
        for method in ["providers/list", "collect/start", "collect/submit", "items/preview", "items/detail", "items/encode"] {
            #expect(methods.contains(.string(method)), "capabilities.methods lacks \(method)")
        }

        // providers/list: the Note provider, loaded from the build folder with no flags.
        let list = try client.call("providers/list")
        let providers = list["providers"]?.arrayValue ?? []
        let note = try #require(providers.first { $0["id"] == "com.contexthost.note" })
        #expect(note["status"] == "loaded")
        #expect(note["available"] == true)
        #expect(note["title"] == "Note")
        #expect(note["maximumAttachmentCount"] == 5)
        let libraryPath = try #require(note["libraryPath"]?.stringValue)
        #expect(libraryPath.hasSuffix("/libNoteProvider.so") || libraryPath.hasSuffix("/libNoteProvider.dylib"))
        #expect(URL(fileURLWithPath: libraryPath).deletingLastPathComponent().resolvingSymlinksInPath().path
            == URL(fileURLWithPath: BuildProducts.directory).resolvingSymlinksInPath().path)

        // collect/start: the note form.
        let start = try client.call("collect/start", ["providerId": "com.contexthost.note"])
        let sessionID = try #require(start["sessionId"]?.stringValue)
        #expect(start["providerId"] == "com.contexthost.note")
        let form = try #require(start["form"])
        #expect(form["ctxui"] == 1)
        let fieldIDs = (form["fields"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(fieldIDs == ["title", "body"])
        #expect(form["fields"]?.arrayValue?.first?["required"] == true)

        // collect/submit with an invalid value: per-field errors, session stays open.
        let invalid = try client.call("collect/submit", ["sessionId": .string(sessionID), "values": ["title": "", "body": "Milk, eggs"]])
        #expect(invalid["outcome"] == "invalid")
        let titleError = try #require(invalid["fieldErrors"]?["title"]?.stringValue)
        #expect(titleError.lowercased().contains("title"))
        #expect(invalid["fieldErrors"]?["body"] == nil)

        // collect/submit valid: an item.
        let body = "Milk, eggs and **bread**.\nAlso coffee."
        let item = try client.submitForItem(session: .string(sessionID), values: ["title": "Groceries", "body": .string(body)])
        #expect(item["providerId"] == "com.contexthost.note")
        #expect(item["type"] == "note")
        #expect(item["displayName"] == "Groceries")
        #expect(item["id"]?.stringValue?.count == 36)
        #expect(item["content"]?["wordCount"] == 6)

        // The session is closed after an item.
        let closed = try client.callExpectingError("collect/submit", ["sessionId": .string(sessionID), "values": [:]])
        #expect(closed["code"] == -32020)

        // items/preview
        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["ctxui"] == 1)
        #expect(chip["title"] == "Groceries")
        #expect(chip["subtitle"] == "6 words")
        #expect(chip["tone"] == "neutral")
        #expect(chip["fallbackText"]?.stringValue?.contains("Groceries") == true)

        // items/detail
        let detail = try client.call("items/detail", ["item": item])
        #expect(detail["title"] == "Groceries")
        let blocks = detail["blocks"]?.arrayValue ?? []
        let text = try #require(blocks.first { $0["type"] == "text" })
        #expect(text["text"] == .string(body))
        let facts = try #require(blocks.first { $0["type"] == "facts" })
        let words = facts["facts"]?.arrayValue?.first { $0["label"] == "Words" }
        #expect(words?["value"] == "6")

        // items/describe
        let describe = try client.call("items/describe", ["item": item])
        #expect(describe["text"]?.stringValue?.contains("Groceries") == true)

        // items/encode: JSON (default) and plain text.
        let json = try client.call("items/encode", ["item": item])
        #expect(json["representation"] == "json")
        #expect(json["contentType"] == "application/json")
        let jsonData = try #require(json["data"]?.stringValue)
        let decodedJSON = try JSONValue(parsing: Array(try #require(Data(base64Encoded: jsonData))))
        #expect(decodedJSON["title"] == "Groceries")
        #expect(decodedJSON["body"] == .string(body))
        let plain = try client.call("items/encode", ["item": item, "representation": "text"])
        #expect(plain["representation"] == "text")
        let plainData = try #require(plain["data"]?.stringValue)
        let decodedText = String(decoding: try #require(Data(base64Encoded: plainData)), as: UTF8.self)
        #expect(decodedText == "Groceries\n\n" + body)

        // shutdown → exit 0
        #expect(try client.shutdown() == 0)
    }

    @Test("stdin EOF ends the host after pending answers are written")
    func exitOnEOF() throws {
        let client = try RPCClient(arguments: [])
        defer { client.host.terminate() }
        let id = client.send("ping")
        client.host.closeInput()
        let response = try client.response(to: id)
        #expect(response["result"] == [:])
        #expect(client.host.waitForExit() == 0)
    }

    @Test("exit without shutdown exits 1")
    func exitWithoutShutdown() throws {
        let client = try RPCClient(arguments: [])
        defer { client.host.terminate() }
        try client.initialize()
        client.notify("exit")
        #expect(client.host.waitForExit() == 1)
    }
}
