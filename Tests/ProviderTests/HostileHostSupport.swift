import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// A real `context-host` (in-process isolation, so a trap in a provider would end it) with one
/// bundled provider's manifest copied into a temporary manifests folder and its settings given
/// through a `--config` file: what the hostile-input tests drive.
final class HostileHost: @unchecked Sendable {
    let folder: TemporaryDirectory
    let client: RPCClient
    let providerId: String
    var host: HostProcess { client.host }
    var manifests: String { folder.path + "/manifests" }

    /// Error codes a hostile request may get (docs/protocol.md): the host's invalid params,
    /// provider unavailable / failed to load / its own error. Not `-32014` (the provider answered
    /// something the host had to refuse: a provider bug) nor `-32015` (it did not answer in time:
    /// a hang is a failure, never an outcome).
    static let documentedErrors: Set<Int> = [-32700, -32600, -32602, -32011, -32012, -32013, -32020]

    /// - settings: values for the provider's settings (strings or numbers), written to the config file.
    init(
        manifest: String, providerId: String, settings: [String: JSONValue], grantedPermissions: [String] = [],
        folder: TemporaryDirectory? = nil, editManifest: (String) -> String = { $0 }
    ) throws {
        self.folder = try folder ?? TemporaryDirectory()
        self.providerId = providerId
        let text = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/" + manifest, encoding: .utf8)
        try self.folder.write("manifests/" + manifest, editManifest(text))
        var config = "providers:\n  \(providerId):\n    settings:\n"
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) {
            // JSON strings and numbers are valid YAML flow scalars.
            config += "      \(key): \(value.jsonString)\n"
        }
        let configPath = try self.folder.write("host.yaml", config)
        try self.folder.write("home/.keep", "")
        let process = try HostProcess(
            arguments: [
                "serve", "--manifests", self.folder.path + "/manifests", "--config", configPath, "--no-state", "--no-watch",
                "--isolation", "in-process",
            ],
            environment: ["HOME": self.folder.path + "/home"])
        client = RPCClient(host: process)
        try client.initialize([
            "clientInfo": ["name": "hostile-tests"], "locale": "en-US",
            "grantedPermissions": .array(grantedPermissions.map(JSONValue.string)),
        ])
    }

    deinit { client.host.terminate() }

    /// The host's peak resident memory (VmHWM) in MiB.
    var peakMemoryMiB: Double {
        let status = (try? String(contentsOfFile: "/proc/\(host.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kib = Double(line.split(separator: " ").dropFirst().first { !$0.isEmpty && $0 != "\t" }.map(String.init) ?? "") ?? 0
            return kib / 1024
        }
        return 0
    }

    /// A request that must get a result or a documented error within `timeout` seconds.
    @discardableResult
    func request(_ method: String, _ params: JSONValue, timeout: Double = 30) throws -> (result: JSONValue?, error: JSONValue?) {
        let id = client.send(method, params)
        let response = try client.response(to: id, timeout: timeout)
        if let error = response["error"] {
            let code = error["code"]?.intValue ?? 0
            #expect(Self.documentedErrors.contains(code), "\(method): undocumented error \(error)")
            return (nil, error)
        }
        let result = try #require(response["result"], "\(method): neither result nor error: \(response)")
        return (result, nil)
    }

    /// A request whose params are raw JSON text (to send numbers such as 1e400, which read as
    /// infinity and which `JSONValue` cannot write).
    @discardableResult
    func rawRequest(_ method: String, params text: String, timeout: Double = 30) throws -> (result: JSONValue?, error: JSONValue?) {
        rawID += 1
        let id = "raw-\(rawID)"
        client.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":\"\(id)\",\"method\":\"\(method)\",\"params\":\(text)}")
        let response = try client.response(to: .string(id), timeout: timeout)
        if let error = response["error"] {
            let code = error["code"]?.intValue ?? 0
            #expect(Self.documentedErrors.contains(code), "\(method): undocumented error \(error)")
            return (nil, error)
        }
        return (try #require(response["result"], "\(method): neither result nor error: \(response)"), nil)
    }

    private var rawID = 0

    /// `request` that must succeed.
    func result(_ method: String, _ params: JSONValue, timeout: Double = 30) throws -> JSONValue {
        let (result, error) = try request(method, params, timeout: timeout)
        return try #require(result, "\(method) failed: \(error ?? .null)")
    }

    /// The host still answers `ping` and its peak memory stayed below `memoryBoundMiB`.
    func expectAlive(memoryBoundMiB: Double = 256, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(host.process.isRunning, "the host died; stderr:\n\(host.standardError.suffix(2000))", sourceLocation: sourceLocation)
        let pong = try client.response(to: client.send("ping"), timeout: 10)
        #expect(pong["result"] != nil, "ping: \(pong)", sourceLocation: sourceLocation)
        let peak = peakMemoryMiB
        #expect(peak > 0 && peak < memoryBoundMiB, "peak RSS \(peak) MiB, bound \(memoryBoundMiB) MiB", sourceLocation: sourceLocation)
    }

    /// `collect/start` for this provider: the session id, or the documented error.
    func start() throws -> (session: JSONValue?, error: JSONValue?) {
        let (result, error) = try request("collect/start", ["providerId": .string(providerId)], timeout: 60)
        return (result?["sessionId"], error)
    }

    /// `collect/start` then `collect/submit` of `values`: the item, or the answer (the outcome
    /// or the documented error) when there is none.
    func submit(_ values: JSONValue, timeout: Double) throws -> (item: JSONValue?, answer: JSONValue?) {
        let (session, error) = try start()
        guard let session else { return (nil, error) }
        let (result, submitError) = try request("collect/submit", ["sessionId": session, "values": values], timeout: timeout)
        return (result?["item"], result ?? submitError)
    }

    /// preview, detail, describe and encode (json, then `representation`) of an item: each a
    /// result or a documented error (`null` when the answer had neither).
    func views(_ item: JSONValue, representation: String) throws -> [JSONValue] {
        var answers: [JSONValue] = []
        for (method, extra) in [("items/preview", nil), ("items/detail", nil), ("items/describe", nil), ("items/encode", nil), ("items/encode", representation)] as [(String, String?)] {
            var params: JSONObject = ["item": item]
            if let extra { params["representation"] = .string(extra) }
            let (result, error) = try request(method, .object(params), timeout: 10)
            answers.append(result ?? error ?? .null)
        }
        return answers
    }

    /// The `providers/list` entry of this provider.
    func listing() throws -> JSONValue {
        let list = try result("providers/list", [:])
        return try #require(list["providers"]?.arrayValue?.first { $0["id"] == .string(providerId) })
    }

    /// Every string in a JSON value, joined (to look for a marker anywhere in an answer).
    static func allText(_ value: JSONValue?) -> String {
        guard let value else { return "" }
        switch value {
        case .string(let text): return text
        case .array(let array): return array.map { allText($0) }.joined(separator: "\n")
        case .object(let object): return object.keys.map { $0 + "\n" + allText(object[$0]) }.joined(separator: "\n")
        default: return ""
        }
    }

    /// A file of `size` bytes made of `line` repeated (written in blocks, never held whole).
    static func writeRepeated(_ path: String, header: String = "", line: String, count: Int, footer: String = "") throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        handle.write(Data(header.utf8))
        let block = Data(String(repeating: line, count: 4096).utf8)
        var left = count
        while left >= 4096 {
            handle.write(block)
            left -= 4096
        }
        if left > 0 { handle.write(Data(String(repeating: line, count: left).utf8)) }
        handle.write(Data(footer.utf8))
    }
}
