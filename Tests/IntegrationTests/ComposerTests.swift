import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Composers: limits, listing, removal, send, and drafts that survive SIGKILL.
@Suite("Composer")
struct ComposerTests {
    static let fixtureManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests"
    static let bundledManifests = BuildProducts.packageRoot + "/manifests"

    private func client(stateDirectory: String? = nil, manifests: String = fixtureManifests) throws -> RPCClient {
        var arguments = ["--manifests", Self.bundledManifests, "--manifests", manifests, "--library-path", BuildProducts.directory]
        if let stateDirectory { arguments += ["--state-dir", stateDirectory] }
        let client = try RPCClient(arguments: arguments)
        try client.initialize()
        return client
    }

    private func open(_ client: RPCClient, _ params: JSONValue = [:]) throws -> JSONValue {
        let result = try client.call("composer/open", params)
        return try #require(result["composerId"])
    }

    /// The id of the item `attachNote` attached (failing when it attached none).
    private func attachedNoteID(_ client: RPCClient, composer: JSONValue, title: String, body: String) throws -> JSONValue {
        let attached = try attachNote(client, composer: composer, title: title, body: body)
        return try #require(attached["result"]?["item"]?["id"], "\(attached)")
    }

    /// Fills and submits the Note form inside a composer.
    @discardableResult
    private func attachNote(_ client: RPCClient, composer: JSONValue, title: String, body: String = "Some words here.") throws -> JSONValue {
        let start = try client.call("collect/start", ["providerId": "com.contexthost.note", "composerId": composer])
        let session = try #require(start["sessionId"])
        let id = client.send("collect/submit", ["sessionId": session, "values": ["title": .string(title), "body": .string(body)]])
        return try client.response(to: id)
    }

    @Test("per-provider limit: the fixture allows 3, the 4th is refused before and after collection")
    func providerLimit() throws {
        let client = try client()
        defer { client.host.terminate() }
        let composer = try open(client)
        for _ in 0..<3 {
            let made = try client.call("collect/make", ["providerId": "com.contexthost.fixture", "composerId": composer])
            #expect(made["item"]?["providerId"] == "com.contexthost.fixture")
        }
        let refused = try client.callExpectingError("collect/make", ["providerId": "com.contexthost.fixture", "composerId": composer])
        #expect(refused["code"] == -32030)
        #expect(refused["data"]?["kind"] == "provider")
        #expect(refused["data"]?["providerId"] == "com.contexthost.fixture")
        #expect(refused["data"]?["limit"] == 3)
        #expect(refused["data"]?["current"] == 3)
        let start = try client.callExpectingError("collect/start", ["providerId": "com.contexthost.fixture", "composerId": composer])
        #expect(start["code"] == -32030)
        // providers/list with the composer says why.
        let list = try client.call("providers/list", ["composerId": composer])
        let fixture = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fixture" })
        #expect(fixture["canAttach"] == false)
        #expect(fixture["attachBlocked"]?["code"] == -32030)
        #expect(fixture["attachBlocked"]?["limit"] == 3)
        let note = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.note" })
        #expect(note["canAttach"] == true)
    }

    @Test("per-composer limit, reached while a second form is open")
    func composerLimitDuringCollection() throws {
        let client = try client()
        defer { client.host.terminate() }
        let composer = try open(client, ["maximumItems": 1])
        // Two forms open at once; both pass the check at start.
        let first = try client.call("collect/start", ["providerId": "com.contexthost.note", "composerId": composer])
        let second = try client.call("collect/start", ["providerId": "com.contexthost.note", "composerId": composer])
        let attached = try client.call("collect/submit", ["sessionId": first["sessionId"]!, "values": ["title": "One", "body": "first"]])
        #expect(attached["outcome"] == "item")
        #expect(attached["composer"]?["itemCount"] == 1)
        // The second completes after the limit was reached: refused, with the item handed back.
        let refused = try client.callExpectingError("collect/submit", ["sessionId": second["sessionId"]!, "values": ["title": "Two", "body": "second"]])
        #expect(refused["code"] == -32030)
        #expect(refused["data"]?["kind"] == "composer")
        #expect(refused["data"]?["limit"] == 1)
        #expect(refused["data"]?["current"] == 1)
        #expect(refused["data"]?["item"]?["displayName"] == "Two")
        // And a new collection is refused up front.
        let start = try client.callExpectingError("collect/start", ["providerId": "com.contexthost.note", "composerId": composer])
        #expect(start["code"] == -32030)
        #expect(start["message"] == "This composer already has 1 item(s), its maximum; remove one to attach another.")
    }

    @Test("byte budget for encoded content")
    func byteBudget() throws {
        let client = try client()
        defer { client.host.terminate() }
        let composer = try open(client, ["byteBudget": 200])
        let small = try attachNote(client, composer: composer, title: "Small", body: "tiny")
        #expect(small["result"]?["outcome"] == "item")
        let used = try #require(small["result"]?["composer"]?["bytesUsed"]?.intValue)
        #expect(used > 0 && used < 200)
        let big = try attachNote(client, composer: composer, title: "Big", body: String(repeating: "word ", count: 100))
        let error = try #require(big["error"])
        #expect(error["code"] == -32031)
        #expect(error["data"]?["limit"] == 200)
        #expect(error["data"]?["current"] == .number(Double(used)))
        #expect((error["data"]?["itemBytes"]?.intValue ?? 0) > 200 - used)
        #expect(error["data"]?["item"]?["displayName"] == "Big")
    }

    @Test("list with chips, remove, close, and unknown ids")
    func listRemoveClose() throws {
        let client = try client()
        defer { client.host.terminate() }
        let composer = try open(client)
        let itemID = try attachedNoteID(client, composer: composer, title: "Groceries", body: "Milk and eggs")
        let listing = try client.call("composer/list", ["composerId": composer])
        let items = listing["items"]?.arrayValue ?? []
        #expect(items.count == 1)
        #expect(items.first?["chip"]?["title"] == "Groceries")
        #expect(items.first?["chip"]?["subtitle"] == "3 words")
        #expect(items.first?["providerAvailable"] == true)
        let all = try client.call("composer/list")
        #expect(all["composers"]?.arrayValue?.map { $0["composerId"] } == [composer])

        let removed = try client.call("composer/remove", ["composerId": composer, "itemId": itemID])
        #expect(removed["removed"]?["id"] == itemID)
        #expect(removed["itemCount"] == 0)
        let again = try client.callExpectingError("composer/remove", ["composerId": composer, "itemId": itemID])
        #expect(again["code"] == -32033)

        let closed = try client.call("composer/close", ["composerId": composer])
        #expect(closed["discardedItems"] == 0)
        let gone = try client.callExpectingError("composer/list", ["composerId": composer])
        #expect(gone["code"] == -32032)
        #expect(gone["data"]?["composerId"] == composer)
        let badOpen = try client.callExpectingError("composer/open", ["maximumItems": 0])
        #expect(badOpen["code"] == -32602)
    }

    @Test("composer/send: the envelope for a note item matches the golden file")
    func sendGolden() throws {
        let client = try client()
        defer { client.host.terminate() }
        let composer = try open(client)
        let itemID = try #require(try attachedNoteID(client, composer: composer, title: "Groceries", body: "Milk, eggs and **bread**.\nAlso coffee.").stringValue)
        let envelope = try client.call("composer/send", ["composerId": composer, "text": "What can I cook with this?"])
        // Ids are random: put placeholders in before comparing.
        let text = envelope.jsonString
            .replacingOccurrences(of: itemID, with: "ITEM-ID")
            .replacingOccurrences(of: composer.stringValue!, with: "COMPOSER-ID")
        let goldenPath = BuildProducts.packageRoot + "/Tests/IntegrationTests/Golden/send-note.json"
        let golden = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: goldenPath))))
        #expect(try JSONValue(parsing: text) == golden, "got \(text)")
        // The composer is empty after sending.
        #expect(try client.call("composer/list")["composers"]?.arrayValue?.first?["itemCount"] == 0)
    }

    @Test("drafts survive SIGKILL: two composers restored intact")
    func draftsSurviveKill() throws {
        let state = try TemporaryDirectory()
        var expected: [JSONValue: [JSONValue]] = [:]
        do {
            let client = try client(stateDirectory: state.path)
            let first = try open(client)
            let second = try open(client, ["maximumItems": 5])
            for (composer, titles) in [(first, ["A1", "A2"]), (second, ["B1", "B2", "B3"])] {
                for title in titles {
                    let response = try attachNote(client, composer: composer, title: title)
                    expected[composer, default: []].append(try #require(response["result"]?["item"]))
                }
            }
            let made = try client.call("collect/make", ["providerId": "com.contexthost.fixture", "composerId": second])
            expected[second, default: []].append(try #require(made["item"]))
            kill(client.host.process.processIdentifier, SIGKILL)
            _ = client.host.waitForExit()
        }
        let restarted = try client(stateDirectory: state.path)
        defer { restarted.host.terminate() }
        let composers = try restarted.call("composer/list")["composers"]?.arrayValue ?? []
        #expect(Set(composers.compactMap { $0["composerId"] }) == Set(expected.keys))
        for (composer, items) in expected {
            let listing = try restarted.call("composer/list", ["composerId": composer])
            #expect(listing["items"]?.arrayValue?.compactMap { $0["item"] } == items)
        }
    }

    @Test("an item whose provider is gone keeps its place, says so, and can still be sent")
    func providerGone() throws {
        let state = try TemporaryDirectory()
        let composer: JSONValue
        let item: JSONValue
        do {
            let client = try client(stateDirectory: state.path)
            composer = try open(client)
            item = try #require(try client.call("collect/make", ["providerId": "com.contexthost.fixture", "composerId": composer])["item"])
            #expect(try client.shutdown() == 0)
        }
        // Restart without the fixture's manifest folder: its provider is gone.
        let restarted = try RPCClient(arguments: ["--manifests", Self.bundledManifests, "--state-dir", state.path])
        defer { restarted.host.terminate() }
        try restarted.initialize()
        let listing = try restarted.call("composer/list", ["composerId": composer])
        let entry = try #require(listing["items"]?.arrayValue?.first)
        #expect(entry["item"] == item)
        #expect(entry["providerAvailable"] == false)
        #expect(entry["providerProblem"]?["code"] == -32010)
        #expect(entry["chip"]?["title"] == item["displayName"])
        #expect(entry["chip"]?["fallbackText"] == item["displayName"])
        let envelope = try restarted.call("composer/send", ["composerId": composer])
        let sent = try #require(envelope["message"]?["contextItems"]?.arrayValue?.first)
        #expect(sent["metadata"]?["provider"] == "com.contexthost.fixture")
        #expect(sent["metadata"]?["localizedDescription"] == item["displayName"])
        #expect(sent["encodedContent"]?.stringValue?.isEmpty == false)
    }

    @Test("when a provider's manifest is deleted while the host runs, its items stay and say so")
    func providerRemovedByHotReload() throws {
        let manifests = try TemporaryDirectory()
        let path = try manifests.write(
            "fixture.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so"))
        let client = try client(manifests: manifests.path)
        defer { client.host.terminate() }
        let composer = try open(client)
        let item = try #require(try client.call("collect/make", ["providerId": "com.contexthost.fixture", "composerId": composer])["item"])
        try FileManager.default.removeItem(atPath: path)
        // The worker's first availability check (started by collect/make) may come first.
        var changed = try client.nextNotification(method: "providers/changed", timeout: 10)
        if changed["params"]?["removed"] == [] {
            changed = try client.nextNotification(method: "providers/changed", timeout: 10)
        }
        #expect(changed["params"]?["removed"] == ["com.contexthost.fixture"])
        let entry = try #require(try client.call("composer/list", ["composerId": composer])["items"]?.arrayValue?.first)
        #expect(entry["item"] == item)
        #expect(entry["providerAvailable"] == false)
        #expect(entry["providerProblem"]?["code"] == -32010)
    }

    @Test("SIGKILL in the middle of writes loses no acknowledged item")
    func killDuringWrites() throws {
        let state = try TemporaryDirectory()
        let manifests = try TemporaryDirectory()
        try manifests.write(
            "fixture.yaml",
            TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", maximumAttachmentCount: 100))
        var acknowledged: [JSONValue] = []
        var composerID: JSONValue = nil
        for round in 0..<4 {
            let client = try client(stateDirectory: state.path, manifests: manifests.path)
            if round == 0 { composerID = try open(client, ["maximumItems": 100]) }
            // Fire many attaches without waiting, then kill while they are being written.
            var ids: [JSONValue] = []
            for _ in 0..<15 {
                ids.append(client.send("collect/make", ["providerId": "com.contexthost.fixture", "composerId": composerID]))
            }
            usleep(UInt32(2_000 + round * 3_000))
            kill(client.host.process.processIdentifier, SIGKILL)
            _ = client.host.waitForExit()
            // Every answer that arrived before the kill names an item that must survive.
            while let message = try? client.nextMessage(timeout: 0.2) {
                if let item = message["result"]?["item"], ids.contains(message["id"] ?? .null) { acknowledged.append(item) }
            }
        }
        let restarted = try client(stateDirectory: state.path, manifests: manifests.path)
        defer { restarted.host.terminate() }
        let listing = try restarted.call("composer/list", ["composerId": composerID])
        let restored = Set(listing["items"]?.arrayValue?.compactMap { $0["item"]?["id"] } ?? [])
        for item in acknowledged {
            #expect(restored.contains(item["id"] ?? .null), "acknowledged item \(item) was lost")
        }
        // No interrupted write is left behind, and nothing was set aside as corrupt.
        let files = try FileManager.default.contentsOfDirectory(atPath: state.path + "/composers")
        #expect(files.allSatisfy { $0.hasSuffix(".json") }, "\(files)")
    }
}
