import CHostSupport
import ContextHost
import ContextHostTestSupport
import ContextNetwork
import ContextProtocol
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A worker whose provider uses the broker sends its host requests (`host/fetch`) on a pipe of
/// its own, its fd 3, which the host reads on the provider's HTTP event loop (issue 37;
/// docs/architecture.md, "Threads"; docs/security.md, "Egress"). The pipe carries host requests
/// and nothing else: anything else on it kills the worker as a protocol violation.
@Suite(.serialized) struct HostRequestChannelTests {
    /// The fd-3 attempts of the hostile C fixture (hostile.c), each in a provider of its own (each
    /// crashes once), and what the host must say of each.
    static let violations: [(escape: String, reason: String)] = [
        ("fd3-junk", "limit 2097152"),
        ("fd3-short-length", "a frame of 4 bytes is shorter than its tag"),
        ("fd3-huge-length", "a frame of 4294967272 bytes (limit 2097152)"),
        ("fd3-response", "not a host request"),
        ("fd3-notification", "not a host request"),
    ]

    static func hostileItem(_ provider: String, _ content: JSONValue) -> JSONValue {
        [
            "id": .string(UUID().uuidString.lowercased()), "providerId": .string(provider), "type": "hostile", "displayName": "Hostile",
            "content": content,
        ]
    }

    @Test("junk, a bad length, a huge length or a frame that is not a host request on fd 3 kills the worker; a host request there is fetched")
    func onlyHostRequestsOnTheChannel() throws {
        let root = try TemporaryDirectory()
        let server = try LoopbackHTTPS()
        var ids: [String] = []
        for name in Self.violations.map(\.escape) + ["control"] {
            let id = "com.contexthost.hostile-\(name)"
            ids.append(id)
            try root.write("manifests/\(name).yaml", TestManifest.brokered(
                id: id, title: "Hostile \(name)", iconName: "ant", library: "libFixtureHostileProvider.so", port: server.port,
                networkTimeout: "10s", timeouts: "{ collect: 10s, preview: 20s, detail: 10s, encode: 10s }", extra: "availability:\n  permissions: []\n"))
        }
        // The same library without network origins (no broker, so no host-request pipe): another
        // provider that must keep being served.
        try root.write("manifests/plain.yaml", """
            \(TestManifest.identity(id: "com.contexthost.hostile-plain", title: "Hostile plain", iconName: "ant", version: "0.0.1", library: "libFixtureHostileProvider.so"))
            collection: programmatic
            isolation: process
            timeouts: { collect: 10s, preview: 20s, detail: 10s, encode: 10s }
            """)
        let client = try RPCClient(host: HostProcess(
            arguments: ["serve", "--no-watch", "--no-installed", "--manifests", root.path + "/manifests"],
            environment: TestCA.hostEnvironment(root: root.path, caFile: server.caFile)))
        defer { client.host.terminate() }
        _ = try client.initialize(["clientInfo": ["name": "tests"], "locale": "en-US", "grantedPermissions": ["network"]])

        // Control: host requests the provider frames and writes on fd 3 itself are read, fetched
        // and answered (the channel is real, so the refusals below are the defence).
        let control = client.send("items/preview", ["item": Self.hostileItem(
            "com.contexthost.hostile-control", ["escape": "fd3-burst", "path": .string(server.baseURL + "/huge/100"), "count": 3])])
        let answered = try client.response(to: control, timeout: 60)
        #expect(answered["result"]?["subtitle"] == "answered 3/3; inside-reply 0; codes 200,200,200; first error: none", "\(answered)")
        #expect(server.requests.filter { $0["path"]?.stringValue == "/huge/100" }.count == 3)

        for (escape, reason) in Self.violations {
            let id = client.send("items/preview", ["item": Self.hostileItem("com.contexthost.hostile-\(escape)", ["escape": .string(escape)])])
            let response = try client.response(to: id, timeout: 30)
            let error = response["error"]
            #expect(error?["code"]?.intValue == -32016, "\(escape): \(response)")
            #expect(error?["data"]?["cause"] == "protocol", "\(escape): \(response)")
            let message = error?["message"]?.stringValue ?? ""
            #expect(message.contains("broke the host protocol"), "\(escape): \(message)")
            #expect(message.contains("host-request channel") && message.contains(reason), "\(escape): \(message)")
        }

        // The host keeps serving: the control provider fetches again, the plain one answers.
        let again = client.send("items/preview", ["item": Self.hostileItem(
            "com.contexthost.hostile-control", ["escape": "host-burst", "path": .string(server.baseURL + "/huge/100"), "count": 2])])
        #expect(try client.response(to: again, timeout: 60)["result"]?["subtitle"] == "answered 2/2; inside-reply 0; codes 200,200; first error: none")
        let normal = client.send("items/preview", ["item": Self.hostileItem("com.contexthost.hostile-plain", [:])])
        #expect(try client.response(to: normal, timeout: 30)["result"]?["subtitle"] == "normal")
        // And a provider that broke the channel gets a new worker, whose channel works.
        let restarted = client.send("items/preview", ["item": Self.hostileItem(
            "com.contexthost.hostile-fd3-junk", ["escape": "fd3-burst", "path": .string(server.baseURL + "/huge/100"), "count": 1])])
        #expect(try client.response(to: restarted, timeout: 60)["result"]?["subtitle"] == "answered 1/1; inside-reply 0; codes 200; first error: none")
        _ = try client.shutdown()
        #expect(client.host.standardError.contains("broke the host-request channel"))
    }

    /// `ctxh_spawn_with_fd3` when this process's end of the pipe already is fd 3 (an embedder
    /// that closed its descriptors): the child must still have it open on 3. Run in a forked
    /// child of the test (one thread, so fd 3 can be taken there), which only calls C.
    @Test("the pipe end given as fd 3 reaches the child as fd 3 even when it is fd 3 here, close-on-exec")
    func spawnWhenTheParentsEndIsFd3() throws {
        var pipeFDs: [Int32] = [-1, -1]
        #expect(ctxh_pipe_cloexec(&pipeFDs) == 0)
        defer { pipeFDs.forEach { close($0) } }
        // The child runs /bin/sh, which writes to its fd 3 (and fails if it has none).
        let arguments = ["/bin/sh", "-c", "printf 'fd3 works' >&3"]
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { cEnvironment.forEach { free($0) } }
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let writeEnd = pipeFDs[1]
        let child = fork()
        if child == 0 {
            // In the forked test child: make the pipe's write end fd 3, close-on-exec as every
            // descriptor the host makes is, then spawn with it as fd 3.
            if dup2(writeEnd, 3) != 3 || fcntl(3, F_SETFD, FD_CLOEXEC) != 0 { _exit(10) }
            if fcntl(3, F_GETFD) & FD_CLOEXEC == 0 { _exit(11) }
            close(writeEnd)
            var pid: pid_t = 0
            if ctxh_spawn_with_fd3("/bin/sh", &cArguments, &cEnvironment, devNull, devNull, devNull, 3, &pid) != 0 { _exit(12) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            // The parent's fd 3 is still its own (and still close-on-exec).
            if fcntl(3, F_GETFD) & FD_CLOEXEC == 0 { _exit(13) }
            _exit(status == 0 ? 0 : 14)
        }
        #expect(child > 0)
        close(pipeFDs[1])
        pipeFDs[1] = -1
        // Bounded: read what the shell wrote until every write end is closed (5 s at most).
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(5)
        var chunk = [UInt8](repeating: 0, count: 256)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(pipeFDs[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        var status: Int32 = 0
        var reaped = false
        while ContinuousClock.now < deadline + .seconds(5) {
            if waitpid(child, &status, WNOHANG) == child {
                reaped = true
                break
            }
            usleep(10_000)
        }
        if !reaped {
            kill(child, SIGKILL)
            _ = waitpid(child, &status, 0)
        }
        #expect(reaped, "the forked child did not finish within 10 s")
        #expect(status == 0, "the forked child failed: exit \((status >> 8) & 0xff), signal \(status & 0x7f)")
        #expect(String(decoding: received, as: UTF8.self) == "fd3 works")
    }

    /// The event loop entry and the pipe's reader of a provider go with its worker: after an idle
    /// stop, and when the host closes.
    @Test("a worker's fd-3 reader and its provider's loop entry go when the worker stops")
    func readerAndLoopGoWithTheWorker() async throws {
        try BuildProducts.checkBuilt()
        let root = try TemporaryDirectory()
        let server = try LoopbackHTTPS()
        let provider = "com.contexthost.fetch-fixture"
        try root.write("manifests/fetch.yaml", TestManifest.brokered(
            id: provider, title: "Fetch", iconName: "network", library: "libFixtureFetchProvider.so", port: server.port,
            networkTimeout: "10s", timeouts: "{ collect: 10s, preview: 10s, detail: 20s, encode: 10s }"))
        let transport = try AsyncHTTPTransport(extraCAFile: server.caFile)
        var configuration = HostConfiguration(manifestDirectories: [root.path + "/manifests"], libraryDirectories: [BuildProducts.directory])
        configuration.isolation.workerExecutable = BuildProducts.hostExecutable
        configuration.isolation.policy = .process
        // Long enough that a loaded machine checks the reader before the worker goes idle.
        configuration.isolation.workerIdleTimeout = .seconds(2)
        configuration.isolation.dataDirectory = root.path + "/data"
        configuration.stateDirectory = root.path + "/state"
        configuration.fetcher = transport
        let host = try InProcessHost(configuration: configuration)
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "fd3-test")))
        let item = ContextItem(providerId: provider, type: "fetch", displayName: "fetch", content: ["url": .string(server.baseURL + "/huge/50")])

        func fetchOnce() async throws {
            let text = try await host.describe(item)
            let answer = try JSONValue(parsing: Array(text.utf8))
            #expect(answer["status"]?.intValue == 200, "\(text)")
        }
        /// Waits (at most 10 s) until the transport has `streams` streams open.
        func waitFor(streams: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while transport.hostRequestStreamCount != streams, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        }

        try await fetchOnce()
        // The worker's pipe is read on the provider's loop, and the SDK's fetch came that way.
        #expect(transport.hostRequestStreamCount == 1)
        #expect(transport.hostRequestBytesRead > 0)
        #expect(transport.hasEventLoop(for: provider))
        // Idle stop: its reader and the loop entry go.
        try await waitFor(streams: 0)
        #expect(transport.hostRequestStreamCount == 0, "the idle-stopped worker's reader is still open")
        #expect(!transport.hasEventLoop(for: provider), "the provider's loop entry outlived its worker")
        // A new worker gets a new reader; closing the host (the worker stops) ends it too.
        try await fetchOnce()
        #expect(transport.hostRequestStreamCount == 1)
        await host.close()
        try await waitFor(streams: 0)
        #expect(transport.hostRequestStreamCount == 0, "the closed host's worker reader is still open")
        #expect(!transport.hasEventLoop(for: provider))
    }
}
