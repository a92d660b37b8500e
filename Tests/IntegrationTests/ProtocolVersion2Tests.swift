import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Protocol version 2 through the real `context-host`: version negotiation, `$/progress`,
/// `log/message` and `log/setLevel`, UI capabilities, and hostile provider notifications.
@Suite("Protocol version 2")
struct ProtocolVersion2Tests {
    static let fixtureManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests"
    static let isolatedManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-isolated"
    static let bundledManifests = BuildProducts.packageRoot + "/manifests"
    static let health = "com.contexthost.health-metric"

    /// Sends a request and returns its response with every notification the host wrote before
    /// it (a start-up `providers/changed` is skipped).
    static func exchange(_ client: RPCClient, _ method: String, _ params: JSONValue, timeout: Double = 120) throws -> (response: JSONValue, notifications: [JSONValue]) {
        let id = client.send(method, params)
        var notifications: [JSONValue] = []
        while true {
            let message = try client.nextMessage(timeout: timeout)
            if message["id"] == id, message["method"] == nil { return (message, notifications) }
            if message["method"] == "providers/changed" { continue }
            notifications.append(message)
        }
    }

    /// Waits `seconds`, then checks (with a `ping` round trip) that no notification but
    /// `providers/changed` came meanwhile.
    static func quietAfter(_ client: RPCClient, seconds: Double = 0.3) throws -> [JSONValue] {
        Thread.sleep(forTimeInterval: seconds)
        return try exchange(client, "ping", [:]).notifications
    }

    // MARK: Version negotiation

    @Test(
        "initialize negotiates the highest common version",
        arguments: [
            (["protocolVersions": [1, 2]] as JSONValue, 2), (["protocolVersions": [2]], 2), (["protocolVersions": [1]], 1),
            (["protocolVersion": 1], 1), (["protocolVersion": 2], 2), ([:], 2), (["protocolVersion": "2025-11-25"], 2),
            (["protocolVersions": [1, 2, 7]], 2),
        ] as [(JSONValue, Int)])
    func negotiation(params: JSONValue, expected: Int) throws {
        let client = try RPCClient(arguments: ["serve", "--manifests", Self.fixtureManifests, "--no-watch", "--no-state"])
        defer { client.host.terminate() }
        guard case .object(var object) = params else { return }
        object["clientInfo"] = ["name": "tests"]
        let result = try client.initialize(.object(object))
        #expect(result["protocolVersion"] == .number(Double(expected)))
        #expect(result["protocolVersions"] == [1, 2])
        let features = result["capabilities"]?["features"]?.arrayValue ?? []
        #expect(features.contains("progress") == (expected >= 2))
    }

    @Test("no common version: -32050 with data, the session stays uninitialized, a corrected initialize succeeds")
    func unsupportedVersion() throws {
        let client = try RPCClient(arguments: ["serve", "--manifests", Self.fixtureManifests, "--no-watch", "--no-state"])
        defer { client.host.terminate() }
        let error = try client.callExpectingError("initialize", ["clientInfo": ["name": "tests"], "protocolVersions": [7]])
        #expect(error["code"] == -32050)
        #expect(error["data"]?["supported"] == [1, 2])
        #expect(error["data"]?["requested"] == [7])
        let message = error["message"]?.stringValue ?? ""
        #expect(message.contains("7") && message.contains("1, 2") && message.contains("protocolVersions"))
        // Still uninitialized: other requests are refused.
        #expect(try client.callExpectingError("providers/list")["code"] == -32002)
        let legacy = try client.callExpectingError("initialize", ["protocolVersion": 9])
        #expect(legacy["code"] == -32050)
        #expect(try client.callExpectingError("initialize", ["protocolVersions": ["two"]])["code"] == -32602)
        let result = try client.initialize(["clientInfo": ["name": "tests"], "protocolVersions": [2]])
        #expect(result["protocolVersion"] == 2)
        _ = try client.call("providers/list")
    }

    // MARK: log/message

    static let logItem: JSONValue = [
        "id": "5b1f5e84-3b49-4c1e-8d0e-2f7f7f0d6a01", "providerId": "com.contexthost.fixture", "type": "fixture",
        "displayName": "Logger", "content": ["log": true],
    ]

    static func logLines(_ notifications: [JSONValue]) -> [String] {
        notifications.filter { $0["method"] == "log/message" }.compactMap { message in
            #expect(message["params"]?["providerId"] == "com.contexthost.fixture")
            return message["params"]?["level"]?.stringValue
        }
    }

    @Test("log/message carries the lines at or above the client's level; log/setLevel changes it")
    func logLevels() throws {
        let client = try RPCClient(arguments: ["serve", "--manifests", Self.fixtureManifests, "--no-watch", "--no-state"])
        defer { client.host.terminate() }
        try client.initialize(["clientInfo": ["name": "tests"], "logLevel": "warning"])
        let warning = try Self.exchange(client, "items/describe", ["item": Self.logItem])
        #expect(warning.response["result"] != nil)
        #expect(Self.logLines(warning.notifications) == ["error", "warning"])
        let lines = warning.notifications.compactMap { $0["params"]?["message"]?.stringValue }
        #expect(lines == ["fixture error line", "fixture warning line"])

        #expect(try client.call("log/setLevel", ["level": "debug"]) == [:])
        #expect(Self.logLines(try Self.exchange(client, "items/describe", ["item": Self.logItem]).notifications) == ["error", "warning", "info", "debug"])
        _ = try client.call("log/setLevel", ["level": "error"])
        #expect(Self.logLines(try Self.exchange(client, "items/describe", ["item": Self.logItem]).notifications) == ["error"])
        _ = try client.call("log/setLevel", ["level": "off"])
        #expect(try Self.exchange(client, "items/describe", ["item": Self.logItem]).notifications.isEmpty)
        #expect(try client.callExpectingError("log/setLevel", ["level": "loud"])["code"] == -32602)
        // The host's own log (stderr) has the lines too.
        #expect(client.host.standardError.contains("Provider com.contexthost.fixture: fixture error line"))
    }

    @Test("no log/message at the default level (off) nor under protocol version 1")
    func logOffAndVersion1() throws {
        for initialize: JSONValue in [["clientInfo": ["name": "tests"]], ["protocolVersions": [1], "logLevel": "debug"]] {
            let client = try RPCClient(arguments: ["serve", "--manifests", Self.fixtureManifests, "--no-watch", "--no-state"])
            defer { client.host.terminate() }
            try client.initialize(initialize)
            let exchange = try Self.exchange(client, "items/describe", ["item": Self.logItem])
            #expect(exchange.response["result"] != nil)
            #expect(exchange.notifications.isEmpty, "\(initialize): \(exchange.notifications)")
        }
    }

    // MARK: $/progress (Health export)

    /// A Health export of about `kilobytes` KiB: step records, one per 10 minutes from 2023-01-01.
    static func writeExport(to path: String, kilobytes: Int, salt: Int) throws {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n <ExportDate value=\"2024-01-29 09:00:00 +0100\"/>\n"
        var lines: [String] = []
        var index = 0
        var size = text.utf8.count
        while size < kilobytes << 10 {
            let day = index / 144, minute = (index % 144) * 10
            let date = civil(day)
            let start = String(format: "%@ %02d:%02d:00 +0100", date, minute / 60, minute % 60)
            let line = " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" sourceVersion=\"17.2\" unit=\"count\" creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(start)\" value=\"\(50 + (index * 7 + salt) % 400)\"/>\n"
            size += line.utf8.count
            lines.append(line)
            index += 1
        }
        text += lines.joined()
        text += "</HealthData>\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// `YYYY-MM-DD` of day `offset` after 2023-01-01.
    static func civil(_ offset: Int) -> String {
        var components = DateComponents()
        components.year = 2023
        components.month = 1
        components.day = 1 + offset
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = calendar.date(from: components)!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    /// A host whose Health provider reads `folder/data/export.xml`, with its cache in the folder.
    /// (`export` names the data folder: a sandboxed worker may read the folder, so a file
    /// replaced there stays readable.)
    static func healthHost(_ folder: TemporaryDirectory, isolation: String, version: [Int]) throws -> RPCClient {
        let config = try folder.write(
            "host.yaml",
            """
            providers:
              com.contexthost.health-metric:
                settings:
                  export: \(folder.path)/data
                  cacheDirectory: \(folder.path)/cache

            """)
        let host = try HostProcess(
            arguments: ["serve", "--manifests", Self.bundledManifests, "--config", config, "--no-watch", "--no-state", "--isolation", isolation],
            environment: ["HOME": folder.path])
        let client = RPCClient(host: host)
        try client.initialize(["clientInfo": ["name": "tests"], "protocolVersions": .array(version.map { .number(Double($0)) })])
        return client
    }

    static func progress(_ notifications: [JSONValue]) -> [JSONValue] {
        notifications.filter { $0["method"] == "$/progress" }.compactMap { $0["params"] }
    }

    @Test("a first read of a large Health export reports $/progress, only with a token and under version 2", arguments: ["in-process", "process"])
    func healthProgress(isolation: String) throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.path + "/data", withIntermediateDirectories: true)
        // A small export is read while the provider loads; then a large one replaces it, so the
        // next collect/start reads it for the first time.
        try Self.writeExport(to: folder.path + "/data/export.xml", kilobytes: 64, salt: 0)
        let client = try Self.healthHost(folder, isolation: isolation, version: [1, 2])
        defer { client.host.terminate() }
        let warm = try Self.exchange(client, "collect/start", ["providerId": .string(Self.health)])
        #expect(warm.response["result"] != nil, "\(warm.response)")

        try Self.writeExport(to: folder.path + "/data/export.xml", kilobytes: 24 << 10, salt: 1)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: folder.path + "/data/export.xml")[.size] as? Int)
        let read = try Self.exchange(client, "collect/start", ["providerId": .string(Self.health), "progressToken": "health-1"])
        #expect(read.response["result"] != nil, "\(read.response)")
        let progress = Self.progress(read.notifications)
        #expect(progress.count >= 2, "\(progress.count) progress notifications")
        #expect(progress.allSatisfy { $0["token"] == "health-1" })
        let done = progress.compactMap { $0["done"]?.numberValue }
        #expect(done == done.sorted(), "done must not decrease: \(done)")
        #expect(progress.last?["done"] == .number(Double(size)))
        #expect(progress.last?["total"] == .number(Double(size)))
        #expect(progress.allSatisfy { ($0["total"]?.numberValue ?? 0) >= ($0["done"]?.numberValue ?? 1) })
        #expect(try Self.quietAfter(client).isEmpty)

        // Without a token: none (another large file, read for the first time again).
        try Self.writeExport(to: folder.path + "/data/export.xml", kilobytes: 20 << 10, salt: 2)
        let silent = try Self.exchange(client, "collect/start", ["providerId": .string(Self.health)])
        #expect(silent.response["result"] != nil)
        #expect(Self.progress(silent.notifications).isEmpty)
    }

    @Test("no $/progress under protocol version 1, even with a token")
    func healthProgressVersion1() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.path + "/data", withIntermediateDirectories: true)
        try Self.writeExport(to: folder.path + "/data/export.xml", kilobytes: 64, salt: 0)
        let client = try Self.healthHost(folder, isolation: "in-process", version: [1])
        defer { client.host.terminate() }
        _ = try Self.exchange(client, "collect/start", ["providerId": .string(Self.health)])
        try Self.writeExport(to: folder.path + "/data/export.xml", kilobytes: 20 << 10, salt: 3)
        let read = try Self.exchange(client, "collect/start", ["providerId": .string(Self.health), "progressToken": 7])
        #expect(read.response["result"] != nil)
        #expect(read.notifications.isEmpty)
    }

    // MARK: UI capabilities

    @Test("a client that renders only text and facts gets a Health detail without charts", arguments: ["in-process", "process"])
    func uiCapabilities(isolation: String) throws {
        let home = try TemporaryDirectory()
        let host = try HostProcess(
            arguments: ["serve", "--manifests", Self.bundledManifests, "--no-watch", "--no-state", "--isolation", isolation],
            environment: ["HOME": home.path])
        let client = RPCClient(host: host)
        defer { client.host.terminate() }
        try client.initialize(["clientInfo": ["name": "tests"], "capabilities": ["ui": ["blocks": ["text", "facts"], "chipAccessories": []]]])
        let start = try client.call("collect/start", ["providerId": .string(Self.health)])
        let submitted = try client.call(
            "collect/submit",
            ["sessionId": start["sessionId"] ?? .null, "values": ["metric": "steps", "period": "week", "date": "2024-01-10"]])
        let item = try #require(submitted["item"])
        let detail = try client.call("items/detail", ["item": item])
        let types = (detail["blocks"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue }
        #expect(!types.isEmpty)
        #expect(types.allSatisfy { ["text", "facts"].contains($0) }, "\(types)")
        #expect(types.contains("facts"))
        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["accessory"] == nil)
    }

    // MARK: Hostile notifications

    static let floodItem: JSONValue = [
        "id": "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", "providerId": "com.contexthost.misbehaving", "type": "fixture",
        "displayName": "Flood", "content": ["misbehave": "flood", "floodCount": 10000],
    ]

    @Test("10,000 progress notifications and garbage ones: a bounded, valid stream, none after the response", arguments: ["manifest", "in-process"])
    func hostileFlood(isolation: String) throws {
        let client = try RPCClient(arguments: [
            "serve", "--manifests", Self.isolatedManifests, "--no-watch", "--no-state", "--isolation", isolation,
        ])
        defer { client.host.terminate() }
        try client.initialize(["clientInfo": ["name": "tests"], "logLevel": "debug"])
        let flood = try Self.exchange(client, "items/detail", ["item": Self.floodItem, "progressToken": "flood"])
        #expect(flood.response["result"]?["title"] != nil, "\(flood.response)")
        let progress = Self.progress(flood.notifications)
        #expect(progress.count >= 1 && progress.count <= 100, "\(progress.count) progress notifications")
        let done = progress.compactMap { $0["done"]?.numberValue }
        #expect(done == done.sorted())
        #expect(done.allSatisfy { $0.isFinite && $0 >= 0 && $0 <= 10000 })
        #expect(progress.last?["done"] == 10000 && progress.last?["total"] == 10000)
        #expect(progress.allSatisfy { ($0["message"]?.stringValue?.count ?? 0) <= 200 })
        let logs = flood.notifications.filter { $0["method"] == "log/message" }
        #expect(logs.count <= 100)
        #expect(flood.notifications.count <= 1100)
        // Nothing after the response, and the host still answers.
        #expect(try Self.quietAfter(client, seconds: 0.5).isEmpty)
        var calm = Self.floodItem
        if case .object(var object) = calm { object["content"] = [:]; calm = .object(object) }
        let again = try Self.exchange(client, "items/describe", ["item": calm, "progressToken": "calm"])
        #expect(again.response["result"] != nil, "\(again.response)")
        #expect(again.notifications.isEmpty)
    }
}
