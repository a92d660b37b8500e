import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The secret store's key in a real Secret Service (issue 37, docs/security.md §13): the real
/// `context-host secrets` and `serve` against gnome-keyring-daemon on a private D-Bus session
/// bus, checked with an independent client of the keyring (Tests/Fixtures/keyring/oracle.py,
/// Python `secretstorage`). Controls: the same commands without a session bus, and with
/// `CONTEXT_HOST_SECRETS_BACKEND=file`, use the 0600 key file. A keyring that cannot start fails
/// these tests (never a skip): .ci/run installs gnome-keyring, dbus and libsecret-1-0.
@Suite(.serialized) struct SecretKeyringTests {
    static let canaryA = "CANARY-KEYRING-A-3e9a71c4"
    static let canaryB = "CANARY-KEYRING-B-80d2f6b1"
    static let fixture = "com.contexthost.fetch-fixture"
    static let other = "com.contexthost.fetch-other"

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// gnome-keyring-daemon on a private session bus (Tests/Fixtures/keyring/session.sh under
    /// `dbus-run-session`), its files in a folder of its own; stopped when the test lets go.
    final class KeyringSession: @unchecked Sendable {
        let folder: TemporaryDirectory
        let address: String
        private let process: Process

        init() throws {
            folder = try TemporaryDirectory()
            let log = folder.path + "/session.log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "dbus-run-session", "--", "bash", BuildProducts.packageRoot + "/Tests/Fixtures/keyring/session.sh", folder.path,
                String(ProcessInfo.processInfo.processIdentifier),
            ]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle(forWritingAtPath: log)
            process.standardError = FileHandle(forWritingAtPath: log)
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            var found: String?
            while found == nil, process.isRunning, Date() < deadline {
                found = (try? String(contentsOfFile: folder.path + "/address", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                if found == nil { usleep(50_000) }
            }
            guard let found, !found.isEmpty else {
                ChildProcess.stop(process)
                let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw Failure(description: "the Secret Service (gnome-keyring-daemon under dbus-run-session) did not start within 30 s; install gnome-keyring, dbus and libsecret-1-0 (.ci/run does). Its output: \(output)")
            }
            address = found
        }

        /// Asks the session script to stop the daemon (dbus-run-session then ends its bus).
        func stop() {
            _ = FileManager.default.createFile(atPath: folder.path + "/stop", contents: nil)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            ChildProcess.stop(process)
        }

        deinit { stop() }

        /// What the keyring holds for `store`, read by the oracle (JSON), and which canaries any
        /// item holds.
        func oracle(store: String, canaries: [String]) throws -> JSONValue {
            let arguments = ([BuildProducts.testVenvPython, BuildProducts.packageRoot + "/Tests/Fixtures/keyring/oracle.py", store] + canaries)
                .map { "'\($0)'" }.joined(separator: " ")
            let result = try Shell.run("DBUS_SESSION_BUS_ADDRESS='\(address)' \(arguments)", in: folder.path, timeout: 60)
            guard result.status == 0, let line = result.output.split(separator: "\n").last, let json = try? JSONValue(parsing: Array(line.utf8)) else {
                throw Failure(description: "the keyring oracle failed (\(result.status)): \(result.output)")
            }
            return json
        }
    }

    /// The environment of a host that sees `session`'s bus (nil: no session bus at all).
    static func environment(_ setup: EgressTests.Setup, session: KeyringSession?, backend: String = "auto") throws -> [String: String] {
        var environment = setup.environment
        environment["CONTEXT_HOST_SECRETS_BACKEND"] = backend
        if let session {
            environment["DBUS_SESSION_BUS_ADDRESS"] = session.address
            environment["XDG_RUNTIME_DIR"] = session.folder.path + "/run"
        } else {
            environment["DBUS_SESSION_BUS_ADDRESS"] = ""
            environment["XDG_RUNTIME_DIR"] = try setup.root.write("empty-runtime/.keep", "").replacingOccurrences(of: "/.keep", with: "")
        }
        return environment
    }

    /// `secrets set` of `value` (on standard input); its exit status and standard error.
    static func setSecret(_ setup: EgressTests.Setup, _ provider: String, _ value: String, environment: [String: String]) throws -> (Int32?, String) {
        let process = try HostProcess(
            arguments: ["secrets", "set", "--manifests", setup.manifests, "--no-installed", provider, "apiKey"], environment: environment)
        process.write(value + "\n")
        process.closeInput()
        let status = process.waitForExit(timeout: 30)
        return (status, process.standardError)
    }

    /// `setSecret`, which must succeed; answers its stderr (which says where the key is).
    static func setSecretSucceeds(_ setup: EgressTests.Setup, _ provider: String, _ value: String, environment: [String: String]) throws -> String {
        let (status, stderr) = try setSecret(setup, provider, value, environment: environment)
        try #require(status == 0, "\(stderr)")
        return stderr
    }

    /// A brokered fetch of `/echo` by `provider` through `serve`: the server must have received
    /// `canary` as the injected `apikey` (the store's key opened it). Returns serve's stderr.
    static func fetchInjects(_ setup: EgressTests.Setup, _ provider: String, _ canary: String, environment: [String: String]) throws -> String {
        let client = try RPCClient(host: HostProcess(
            arguments: ["serve", "--no-watch", "--no-installed", "--manifests", setup.manifests, "--log-level", "info"], environment: environment))
        try client.initialize(["clientInfo": ["name": "tests"], "locale": "en-US", "grantedPermissions": ["network"]])
        let echo = try EgressTests.fetch(client, setup.server.baseURL + "/echo", provider: provider)
        #expect(echo["status"]?.intValue == 200, "\(echo)")
        #expect(echo["body"]?.stringValue?.contains("apikey=[secret]") == true, "\(echo)")
        #expect(setup.server.requests.contains { $0["path"]?.stringValue?.contains("apikey=\(canary)") == true }, "the server never received the secret")
        _ = try client.shutdown()
        return client.host.standardError
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test func theKeyIsInTheKeyringAndNoKeyFileIsWritten() throws {
        let session = try KeyringSession()
        let setup = try EgressTests.Setup()
        let environment = try Self.environment(setup, session: session)
        let store = setup.root.path + "/secrets"
        let stderr = try Self.setSecretSucceeds(setup, Self.fixture, Self.canaryA, environment: environment)
        #expect(stderr.contains("its key is in the Secret Service keyring"), "\(stderr)")
        #expect(!Self.exists(store + "/secrets.key"), "a key file was written although the keyring is available")
        #expect(Self.exists(store + "/secrets.keyring"))
        #expect(Self.exists(store + "/secrets.store"))

        // The oracle: one item for this store, a 32-byte key in Base64 under our schema, and no
        // canary anywhere in the keyring.
        let answer = try session.oracle(store: store, canaries: [Self.canaryA])
        let items = answer["items"]?.arrayValue ?? []
        #expect(items.count == 1, "\(answer)")
        #expect(items.first?["schema"] == "org.contexthost.SecretStoreKey")
        #expect(items.first?["keyBytes"]?.intValue == 32)
        #expect(answer["canariesFound"]?.arrayValue?.isEmpty == true, "\(answer)")

        // The key from the keyring opens the secret: serve injects it into a brokered fetch, and
        // logs where the key is.
        let served = try Self.fetchInjects(setup, Self.fixture, Self.canaryA, environment: environment)
        #expect(served.contains("the key is in the Secret Service keyring"), "\(served)")

        let list = try CommandRunner.run(["secrets", "list"], environment: environment)
        #expect(list.standardOutput == "\(Self.fixture) apiKey\n")
        let removed = try CommandRunner.run(["secrets", "remove", Self.fixture, "apiKey"], environment: environment)
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(!Self.exists(store + "/secrets.key"))

        // The canary is in no output and no file: not the host's folders, not the keyring's.
        for text in [stderr, served, list.standardOutput, list.standardError, removed.standardOutput, removed.standardError] {
            #expect(!text.contains(Self.canaryA))
        }
        #expect(EgressTests.filesContaining(Self.canaryA, under: setup.root.path).isEmpty)
        #expect(EgressTests.filesContaining(Self.canaryA, under: session.folder.path).isEmpty)
    }

    @Test func withoutAKeyringOrWithTheFileBackendTheKeyFileIsUsed() throws {
        // No session bus at all: the key file, and the reason said.
        let setup = try EgressTests.Setup()
        let environment = try Self.environment(setup, session: nil)
        let store = setup.root.path + "/secrets"
        let stderr = try Self.setSecretSucceeds(setup, Self.fixture, Self.canaryA, environment: environment)
        #expect(stderr.contains("its key is in the key file \(store)/secrets.key (the Secret Service is not available: no D-Bus session bus"), "\(stderr)")
        #expect(Self.exists(store + "/secrets.key"))
        #expect(!Self.exists(store + "/secrets.keyring"))
        _ = try Self.fetchInjects(setup, Self.fixture, Self.canaryA, environment: environment)

        // A keyring is running, but CONTEXT_HOST_SECRETS_BACKEND=file: the file, and the keyring
        // stays empty.
        let session = try KeyringSession()
        let forced = try EgressTests.Setup()
        let forcedEnvironment = try Self.environment(forced, session: session, backend: "file")
        let forcedStderr = try Self.setSecretSucceeds(forced, Self.fixture, Self.canaryB, environment: forcedEnvironment)
        #expect(forcedStderr.contains("its key is in the key file"), "\(forcedStderr)")
        #expect(Self.exists(forced.root.path + "/secrets/secrets.key"))
        let answer = try session.oracle(store: forced.root.path + "/secrets", canaries: [Self.canaryB])
        #expect(answer["allItems"]?.intValue == 0, "\(answer)")

        // An unknown backend name is refused, naming the choices.
        let (badStatus, badStderr) = try Self.setSecret(forced, Self.fixture, Self.canaryB, environment: forcedEnvironment.merging(["CONTEXT_HOST_SECRETS_BACKEND": "kwallet"]) { $1 })
        #expect(badStatus == 2)
        #expect(badStderr.contains("CONTEXT_HOST_SECRETS_BACKEND=kwallet is not a key backend; use one of: auto, file, secret-service"), "\(badStderr)")
        for text in [stderr, forcedStderr, badStderr] {
            #expect(!text.contains(Self.canaryA) && !text.contains(Self.canaryB))
        }
    }

    @Test func anExistingKeyFileIsKeptWhenAKeyringAppears() throws {
        // Secrets set before there was a keyring (the key file)...
        let setup = try EgressTests.Setup()
        let store = setup.root.path + "/secrets"
        _ = try Self.setSecretSucceeds(setup, Self.fixture, Self.canaryA, environment: try Self.environment(setup, session: nil))
        let keyBefore = FileManager.default.contents(atPath: store + "/secrets.key")
        // ...keep working once one is there: the file stays the key, nothing goes to the keyring.
        let session = try KeyringSession()
        let environment = try Self.environment(setup, session: session)
        let otherStderr = try Self.setSecretSucceeds(setup, Self.other, Self.canaryB, environment: environment)
        #expect(otherStderr.contains("its key is in the key file \(store)/secrets.key (an existing key file is kept)"), "\(otherStderr)")
        #expect(keyBefore != nil && FileManager.default.contents(atPath: store + "/secrets.key") == keyBefore)
        #expect(!Self.exists(store + "/secrets.keyring"))
        #expect(try session.oracle(store: store, canaries: [])["allItems"]?.intValue == 0)
        _ = try Self.fetchInjects(setup, Self.fixture, Self.canaryA, environment: environment)
        _ = try Self.fetchInjects(setup, Self.other, Self.canaryB, environment: environment)
    }

    @Test func aStoreWhoseKeyIsInTheKeyringNeverFallsBackToANewKeyFile() throws {
        let setup = try EgressTests.Setup()
        let store = setup.root.path + "/secrets"
        let session = try KeyringSession()
        _ = try Self.setSecretSucceeds(setup, Self.fixture, Self.canaryA, environment: try Self.environment(setup, session: session))
        #expect(Self.exists(store + "/secrets.keyring"))
        session.stop()
        // The keyring is gone: setting another secret is refused, naming the keyring, and no key
        // file is made (a new key would leave the first secret unreadable).
        let (refused, refusal) = try Self.setSecret(setup, Self.other, Self.canaryB, environment: try Self.environment(setup, session: nil))
        #expect(refused == 1)
        #expect(refusal.contains("is kept in the Secret Service keyring (org.freedesktop.secrets), which cannot be used: no D-Bus session bus"), "\(refusal)")
        #expect(!Self.exists(store + "/secrets.key"))
        // Forcing the file backend is refused too.
        let (forced, forcedText) = try Self.setSecret(setup, Self.other, Self.canaryB, environment: try Self.environment(setup, session: nil, backend: "file"))
        #expect(forced == 1)
        #expect(forcedText.contains("is in the Secret Service keyring (\(store)/secrets.keyring), but CONTEXT_HOST_SECRETS_BACKEND=file"), "\(forcedText)")
        #expect(!Self.exists(store + "/secrets.key"))
    }
}
