import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

@Suite(.serialized) struct EgressTests {
    static let canaryA = "CANARY-A-51f0c9e2"
    static let canaryB = "CANARY-B-0b7d3a44"

    /// A folder with the fetch fixture's manifests for `server`, the secrets folder, and XDG
    /// folders, all in one temporary folder so the test can search every file for the canaries.
    final class Setup: @unchecked Sendable {
        let root: TemporaryDirectory
        let server: LoopbackHTTPS
        var manifests: String { root.path + "/manifests" }
        var environment: [String: String] { TestCA.hostEnvironment(root: root.path, caFile: server.caFile) }

        init(extraPermissions: String = "[]") throws {
            root = try TemporaryDirectory()
            server = try LoopbackHTTPS()
            let port = server.port
            // fetch-public declares localhost without privateAddresses: a name that resolves to
            // loopback, which the host must refuse for it.
            for (id, permissions, isPrivate) in [
                ("com.contexthost.fetch-fixture", extraPermissions, true), ("com.contexthost.fetch-other", "[]", true),
                ("com.contexthost.fetch-public", "[]", false),
            ] {
                try root.write("manifests/\(id).yaml", """
                    manifestVersion: 1
                    id: \(id)
                    title: Fetch \(id)
                    iconName: network
                    version: 0.0.1
                    library: libFixtureFetchProvider.so
                    collection: programmatic
                    isolation: process
                    availability:
                      permissions: \(permissions)
                    settings:
                      apiKey:
                        type: secret
                        inject: { query: apikey, origin: "https://localhost:\(port)" }
                      chipURL: { type: string, default: "https://localhost:\(port)/huge/321" }
                    network:
                      timeout: 2s
                      maximumResponseBytes: 1000000
                      origins:
                        - { origin: "https://localhost:\(port)", privateAddresses: \(isPrivate) }
                        - "https://127.0.0.1:\(port)"
                        - "https://quotes.test:\(port)"
                    timeouts: { collect: 30s, preview: 10s, detail: 10s, encode: 10s }
                    """)
            }
        }

        func setSecret(_ provider: String, _ value: String) throws {
            let process = try HostProcess(arguments: ["secrets", "set", "--manifests", manifests, "--no-installed", provider, "apiKey"], environment: environment)
            process.write(value + "\n")
            process.closeInput()
            let status = process.waitForExit(timeout: 20)
            #expect(status == 0, "secrets set: \(process.standardError)")
        }

        func serve(_ extra: [String] = [], initialize: JSONObject = [:]) throws -> RPCClient {
            let client = try RPCClient(host: HostProcess(
                arguments: ["serve", "--no-watch", "--no-installed", "--manifests", manifests, "--log-level", "info"] + extra, environment: environment))
            var params: JSONObject = ["clientInfo": ["name": "tests"], "locale": "en-US", "grantedPermissions": ["network"]]
            for (name, value) in initialize { params[name] = value }
            try client.initialize(.object(params))
            return client
        }
    }

    static func item(_ content: JSONValue, provider: String = "com.contexthost.fetch-fixture") -> JSONValue {
        [
            "id": .string(UUID().uuidString.lowercased()), "providerId": .string(provider), "type": "fetch", "displayName": "fetch",
            "content": content, "createdAt": "2026-11-28T00:00:00Z",
        ]
    }

    /// `items/describe` of a fetch item: what the fixture got (JSON).
    static func fetch(_ client: RPCClient, _ url: String, provider: String = "com.contexthost.fetch-fixture", headers: [[String]] = []) throws -> JSONValue {
        let content: JSONValue = ["url": .string(url), "headers": .array(headers.map { .array($0.map(JSONValue.string)) })]
        let result = try client.call("items/describe", ["item": item(content, provider: provider)])
        return try JSONValue(parsing: Array((result["text"]?.stringValue ?? "").utf8))
    }

    @Test(arguments: ["process", "in-process"])
    func hostileFetchesAreRefusedAndDeclaredOnesWork(isolation: String) throws {
        let setup = try Setup()
        try setup.setSecret("com.contexthost.fetch-fixture", Self.canaryA)
        try setup.setSecret("com.contexthost.fetch-other", Self.canaryB)
        let client = try setup.serve(isolation == "in-process" ? ["--isolation", "in-process"] : [])
        let port = setup.server.port
        let origin = "https://localhost:\(port)"

        // Control: the declared origin works, through the host, with the test CA.
        let ok = try Self.fetch(client, origin + "/stooq/q/d/l/?s=acme.us&i=d")
        #expect(ok["status"]?.intValue == 200, "\(ok)")
        #expect(ok["body"]?.stringValue?.hasPrefix("Date,Open,High,Low,Close") == true)

        // An undeclared origin, directly.
        let direct = try Self.fetch(client, "https://example.invalid/")
        #expect(direct["error"]?.intValue == -32060)
        #expect(direct["reason"] == "origin-not-allowed")
        #expect(direct["field"] == "network.origins")
        // By redirect from a declared origin.
        let redirected = try Self.fetch(client, origin + "/redirect?to=https://example.invalid/steal")
        #expect(redirected["reason"] == "origin-not-allowed", "\(redirected)")
        #expect(redirected["message"]?.stringValue?.contains("a redirect to") == true)
        // Control: a redirect within the origin is followed.
        let followed = try Self.fetch(client, origin + "/redirect?to=/status/202")
        #expect(followed["status"]?.intValue == 202, "\(followed)")
        // By an undeclared IP literal (another loopback address, same server).
        #expect(try Self.fetch(client, "https://127.0.0.2:\(port)/echo")["reason"] == "origin-not-allowed")
        // By a declared IP literal in a private range without privateAddresses.
        let literal = try Self.fetch(client, "https://127.0.0.1:\(port)/echo")
        #expect(literal["reason"] == "private-address", "\(literal)")
        #expect(literal["field"] == "network.origins[1].privateAddresses")
        // By a declared name that resolves to loopback, for a provider that did not declare
        // privateAddresses (fetch-public declares localhost without it).
        let loopbackName = try Self.fetch(client, origin + "/echo", provider: "com.contexthost.fetch-public")
        #expect(loopbackName["reason"] == "private-address", "\(loopbackName)")
        #expect(loopbackName["field"] == "network.origins[0].privateAddresses")
        // IPv6 forms.
        for form in ["https://[::1]:\(port)/", "https://[::ffff:127.0.0.1]:\(port)/", "https://[0:0:0:0:0:0:0:1]:\(port)/"] {
            #expect(try Self.fetch(client, form)["reason"] == "origin-not-allowed", "\(form)")
        }
        // User info tricks.
        #expect(try Self.fetch(client, "https://localhost:\(port)@example.invalid/")["reason"] == "invalid-url")
        #expect(try Self.fetch(client, "https://example.invalid@localhost:\(port)/echo")["reason"] == "invalid-url")

        // Its own secret: injected on the wire (the server saw it), never shown to the provider.
        let echo = try Self.fetch(client, origin + "/echo")
        #expect(echo["status"]?.intValue == 200)
        let body = echo["body"]?.stringValue ?? ""
        #expect(!body.contains(Self.canaryA), "the provider saw its secret: \(body)")
        #expect(body.contains("apikey=[secret]"))
        #expect(setup.server.requests.contains { $0["path"]?.stringValue?.contains("apikey=\(Self.canaryA)") == true })
        // Setting the injected field itself is refused.
        #expect(try Self.fetch(client, origin + "/echo?apikey=guess")["reason"] == "forbidden-header")
        // Another provider's secret: its fetches carry its own, never A's, and A never sees B's.
        let other = try Self.fetch(client, origin + "/echo", provider: "com.contexthost.fetch-other")
        #expect(other["status"]?.intValue == 200)
        #expect(setup.server.requests.contains { $0["path"]?.stringValue?.contains("apikey=\(Self.canaryB)") == true })
        let otherBody = other["body"]?.stringValue ?? ""
        #expect(otherBody.contains(Self.canaryB) == false)
        #expect(otherBody.contains(Self.canaryA) == false)
        #expect(otherBody.contains("apikey=[secret]"))

        // Caps: slow and huge answers, and 429/5xx passed on as statuses.
        #expect(try Self.fetch(client, origin + "/slow/4000")["reason"] == "timeout")
        #expect(try Self.fetch(client, origin + "/huge/2000000")["reason"] == "response-too-large")
        #expect(try Self.fetch(client, origin + "/huge/1000")["status"]?.intValue == 200)
        #expect(try Self.fetch(client, origin + "/status/429")["status"]?.intValue == 429)

        // providers/list: origins and whether the secret is set, never the value.
        let list = try client.call("providers/list")
        let entry = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fetch-fixture" })
        #expect(entry["secrets"]?["apiKey"] == true)
        #expect(entry["networkAccess"] == "brokered")
        #expect(entry["origins"]?.arrayValue?.first?["origin"]?.stringValue == origin)
        #expect(!list.jsonString.contains(Self.canaryA))

        _ = try client.shutdown()
        // Nothing the host wrote or said holds a secret.
        let stderr = client.host.standardError
        #expect(stderr.contains("fetch com.contexthost.fetch-fixture GET \(origin) 200"), "each fetch is logged")
        for canary in [Self.canaryA, Self.canaryB] {
            #expect(!stderr.contains(canary))
            #expect(Self.filesContaining(canary, under: setup.root.path).isEmpty)
        }
    }

    /// A chip listing's provider calls carry the host as their events client: the fetch fixture's
    /// preview of a `url` item logs a line (`$/log`) and fetches through the host (`host/fetch`)
    /// while `composer/list` waits. Without the host behind the listing's calls the fetch is
    /// answered "method not found" (the chip then says `fetch failed`, the server sees nothing)
    /// and the line never reaches the client.
    @Test(arguments: ["process", "in-process"])
    func aFetchDuringAChipListingIsAnswered(isolation: String) throws {
        let setup = try Setup()
        // (The origin injects the provider's secret: the host refuses the fetch while it is not set.)
        try setup.setSecret("com.contexthost.fetch-fixture", Self.canaryA)
        let client = try setup.serve(isolation == "in-process" ? ["--isolation", "in-process"] : [], initialize: ["logLevel": "info"])
        defer { client.host.terminate() }
        let composer = try #require(try client.call("composer/open")["composerId"])
        let made = try client.call("collect/make", ["providerId": "com.contexthost.fetch-fixture", "composerId": composer])
        #expect(made["item"]?["content"]?["url"]?.stringValue == setup.server.baseURL + "/huge/321", "\(made)")
        let fetched = { setup.server.requests.filter { $0["path"]?.stringValue?.hasPrefix("/huge/321?") == true }.count }
        let before = fetched()

        let id = client.send("composer/list", ["composerId": composer])
        var lines: [String] = []
        var listing = JSONValue.null
        while listing.isNull {
            let message = try client.nextMessage(timeout: 60)
            if message["id"] == id, message["method"] == nil {
                listing = message
            } else if message["method"] == "log/message", message["params"]?["providerId"] == "com.contexthost.fetch-fixture" {
                lines.append(message["params"]?["message"]?.stringValue ?? "")
            }
        }
        let chip = listing["result"]?["items"]?.arrayValue?.first?["chip"]
        #expect(chip?["title"] == "fetched 200", "\(listing)")
        #expect(chip?["subtitle"] == "321 bytes", "\(listing)")
        #expect(fetched() == before + 1, "the listing's fetch reached the server through the host")
        #expect(lines == ["chip of Fetched chip: fetching"], "the listing's $/log line reached the client")
    }

    @Test func rawSocketNeedsTheNetworkPermission() throws {
        // Without `network`, the sandboxed worker cannot make a socket at all (EPERM from seccomp).
        let setup = try Setup()
        let client = try setup.serve()
        let refused = try client.call("items/describe", ["item": Self.item(["socket": "127.0.0.1", "port": .number(Double(setup.server.port))])])
        let answer = try JSONValue(parsing: Array((refused["text"]?.stringValue ?? "").utf8))
        #expect(answer["call"] == "socket")
        #expect(answer["errno"]?.intValue == Int(EPERM), "\(answer)")
        _ = try client.shutdown()
        // Control: with the raw `network` permission, the socket opens and connects.
        let granted = try Setup(extraPermissions: "[network]")
        let raw = try granted.serve()
        let opened = try raw.call("items/describe", ["item": Self.item(["socket": "127.0.0.1", "port": .number(Double(granted.server.port))])])
        let ok = try JSONValue(parsing: Array((opened["text"]?.stringValue ?? "").utf8))
        #expect(ok["socket"] == "ok", "\(ok)")
        let list = try raw.call("providers/list")
        #expect(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fetch-fixture" }?["networkAccess"] == "raw")
        _ = try raw.shutdown()
    }

    @Test func secretsCommandNeverPrintsAValue() throws {
        let setup = try Setup()
        try setup.setSecret("com.contexthost.fetch-fixture", Self.canaryA)
        let list = try CommandRunner.run(["secrets", "list"], environment: setup.environment)
        #expect(list.status == 0)
        #expect(list.standardOutput == "com.contexthost.fetch-fixture apiKey\n")
        let listed = list.standardOutput + list.standardError
        #expect(listed.contains(Self.canaryA) == false)
        let hostList = try CommandRunner.run(["list", "--manifests", setup.manifests, "--no-installed"], environment: setup.environment)
        #expect(hostList.standardOutput.contains("secrets: apiKey (set)"), "\(hostList.standardOutput)")
        let hostListed = hostList.standardOutput + hostList.standardError
        #expect(hostListed.contains(Self.canaryA) == false)
        // An undeclared secret name is refused, naming the declared ones.
        let wrong = try HostProcess(arguments: ["secrets", "set", "--manifests", setup.manifests, "--no-installed", "com.contexthost.fetch-fixture", "apikey"], environment: setup.environment)
        wrong.closeInput()
        #expect(wrong.waitForExit(timeout: 20) == 2)
        #expect(wrong.standardError.contains("its secret settings: apiKey"))
        let removed = try CommandRunner.run(["secrets", "remove", "com.contexthost.fetch-fixture", "apiKey"], environment: setup.environment)
        #expect(removed.status == 0)
        #expect(try CommandRunner.run(["secrets", "list"], environment: setup.environment).standardOutput.isEmpty)
    }

    @Test func secretsSetMethodSetsButNeverReadsBack() throws {
        let setup = try Setup()
        let client = try setup.serve()
        let result = try client.call("secrets/set", ["providerId": "com.contexthost.fetch-fixture", "name": "apiKey", "value": .string(Self.canaryA)])
        #expect(result["set"] == true)
        let list = try client.call("providers/list")
        #expect(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fetch-fixture" }?["secrets"]?["apiKey"] == true)
        #expect(!list.jsonString.contains(Self.canaryA))
        let unknown = try client.callExpectingError("secrets/set", ["providerId": "com.contexthost.fetch-fixture", "name": "nope", "value": "x"])
        #expect(unknown["code"]?.intValue == -32602)
        // The value works: the server got it.
        let echo = try Self.fetch(client, setup.server.baseURL + "/echo")
        #expect(echo["status"]?.intValue == 200)
        #expect(setup.server.requests.contains { $0["path"]?.stringValue?.contains("apikey=\(Self.canaryA)") == true })
        #expect(try client.call("secrets/set", ["providerId": "com.contexthost.fetch-fixture", "name": "apiKey", "value": .null])["set"] == false)
        _ = try client.shutdown()
        #expect(!client.host.standardError.contains(Self.canaryA))
        #expect(Self.filesContaining(Self.canaryA, under: setup.root.path).isEmpty)
    }

    static func filesContaining(_ needle: String, under path: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var found: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if let data = FileManager.default.contents(atPath: path + "/" + relative), data.range(of: Data(needle.utf8)) != nil { found.append(relative) }
        }
        return found
    }
}
