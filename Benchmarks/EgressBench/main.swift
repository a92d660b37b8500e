// egress-bench: a 10 KB HTTPS GET on loopback, made directly with the broker's HTTP library
// (AsyncHTTPClient through `AsyncHTTPTransport`, in this process) and brokered (a provider in a
// worker process calls `context.fetch`; the host checks, pins, fetches with the same transport
// and answers). Both are timed where the fetch is made: here for the direct one, inside the
// provider (Tests/Fixtures/FixtureFetchProvider, `"repeat"`) for the brokered one.
//
//   swift build -c release      (context-host, egress-bench and the fixture library libFixtureFetchProvider.so)
//   .build/release/egress-bench [count] [inflight] [--server nginx|python]
//       (default 1000, 8 and nginx; needs openssl, and nginx or python3)
//   CONTEXT_HOST_BUILD_DIR=DIR .build/release/egress-bench …   (the brokered GETs through DIR's
//       context-host and fixture library, e.g. another branch's release build; direct is this one's)
//   Benchmarks/egress-library.sh                  (this, interleaved with libcurl's GET of the same URL)
//
// The server: nginx by default (one worker process, a static 10 KB file, TLS with the test CA,
// keep-alive without a request limit), so that both rows measure the client: the Python replay
// server (`--server python`, Tests/Fixtures/https/replay_server.py, the same 10 KB of 'x') takes
// most of a core at ~2,000 GETs/s and capped the rate. Each row prints the server's CPU time in
// it (from /proc), as a share of one core: near 100% means the server, not the client, set the pace.
//
// Issue 37's budget: brokered p50 ≤ 1.3 × direct p50 (one fetch at a time), and ≥ 2,000 fetches/s
// through one worker (`inflight` fetches at a time, each side: the direct ones in tasks of this
// process, the brokered ones in tasks of the provider).
import ContextHost
import ContextHostTestSupport
import ContextNetwork
import ContextProviderKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

func shell(_ command: String, in folder: String) throws {
    let result = try Shell.run(command, in: folder, timeout: 60)
    guard result.status == 0 else { fatalError("\(command): \(result.output)") }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func report(_ label: String, _ times: [Double], bytes: Int, total: Double, inflight: Int = 1, server: Double? = nil) {
    print(String(
        format: "%@: %d × GET %d B: p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, %.0f fetches/s (%@)%@", label, times.count, bytes,
        percentile(times, 0.5), percentile(times, 0.9), percentile(times, 0.99), Double(times.count) / (total / 1e6),
        inflight == 1 ? "sequential" : "\(inflight) in flight", server.map { String(format: "; server CPU %.0f%% of a core", $0 * 100) } ?? ""))
}

/// The loopback HTTPS server the GETs go to, serving `/huge/BYTES` (BYTES bytes of 'x').
struct Server {
    let process: Process
    let port: Int
    let name: String

    /// The server's CPU time so far (user + system, from /proc), in seconds.
    var cpuSeconds: Double {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // Fields after "(comm)": state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Tests/Fixtures/https/replay_server.py (the egress tests' server).
    static func python(root: String, fixtures: String) throws -> Server {
        try FileManager.default.createDirectory(atPath: root + "/recordings", withIntermediateDirectories: true)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "python3", fixtures + "/replay_server.py", "--cert", root + "/ca/server.pem", "--key", root + "/ca/server.key",
            "--recordings", root + "/recordings", "--log", "/dev/null", "--port-file", root + "/port",
        ]
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        var port = 0
        for _ in 0..<500 where port == 0 {
            port = (try? String(contentsOfFile: root + "/port", encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
            usleep(20_000)
        }
        guard port > 0 else { fatalError("the Python HTTPS server (replay_server.py) did not start within 10 s") }
        return Server(process: server, port: port, name: "replay_server.py (Python)")
    }

    /// nginx, one worker process, serving `root/nginx/www/huge/BYTES` with the test CA's certificate.
    static func nginx(root: String, bodyBytes: Int) throws -> Server {
        let candidates: [String] = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        guard let nginx = candidates.first(where: { access($0, X_OK) == 0 }) else {
            fatalError("nginx not found: install it (apt-get install nginx; .ci/run does), or run egress-bench with --server python")
        }
        let folder = root + "/nginx"
        for sub in ["tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi", "www/huge"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        try String(repeating: "x", count: bodyBytes).write(toFile: folder + "/www/huge/\(bodyBytes)", atomically: true, encoding: .utf8)
        // As root nginx would switch to an unprivileged user that cannot read the key: stay this one.
        var user = ""
        if geteuid() == 0, let account = getpwuid(geteuid()), let group = getgrgid(getegid()) {
            user = "user \(String(cString: account.pointee.pw_name)) \(String(cString: group.pointee.gr_name));"
        }
        for _ in 0..<5 {
            let port = freePort()
            let configuration = """
                \(user)
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(folder)/nginx.pid;
                error_log \(folder)/error.log warn;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(folder)/tmp/body;
                    proxy_temp_path \(folder)/tmp/proxy;
                    fastcgi_temp_path \(folder)/tmp/fastcgi;
                    uwsgi_temp_path \(folder)/tmp/uwsgi;
                    scgi_temp_path \(folder)/tmp/scgi;
                    keepalive_requests 1000000;
                    keepalive_timeout 300s;
                    default_type text/plain;
                    etag off;
                    server {
                        listen 127.0.0.1:\(port) ssl;
                        server_name localhost;
                        ssl_certificate \(root)/ca/server.pem;
                        ssl_certificate_key \(root)/ca/server.key;
                        root \(folder)/www;
                    }
                }
                """
            try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
            let server = Process()
            server.executableURL = URL(fileURLWithPath: nginx)
            server.arguments = ["-c", folder + "/nginx.conf", "-p", folder + "/", "-e", folder + "/error.log"]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            for _ in 0..<500 where server.isRunning {
                if canConnect(port: port) { return Server(process: server, port: port, name: "nginx") }
                usleep(20_000)
            }
            if server.isRunning { server.terminate() }
            server.waitUntilExit()
        }
        fatalError("nginx did not start listening (5 tries): \((try? String(contentsOfFile: folder + "/error.log", encoding: .utf8))?.suffix(1500) ?? "")")
    }

    /// A loopback port nothing listens on now.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { fatalError("cannot bind a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// Runs `body`, and gives its result with the share of one core `server` used meanwhile.
func measuringServer<T>(
    _ server: Server, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> (T, wall: Double)
) async rethrows -> (T, Double) {
    let before = server.cpuSeconds
    let (value, wall) = try await body()
    return (value, wall > 0 ? (server.cpuSeconds - before) / (wall / 1e6) : 0)
}

@main
struct EgressBench {
    static func main() async throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var serverKind = "nginx"
        if let flag = arguments.firstIndex(of: "--server"), flag + 1 < arguments.count {
            serverKind = arguments[flag + 1]
            arguments.removeSubrange(flag...(flag + 1))
        }
        guard serverKind == "nginx" || serverKind == "python" else { fatalError("--server: nginx or python, not '\(serverKind)'") }
        let count = arguments.first.flatMap(Int.init).map { min(max($0, 10), 1000) } ?? 1000
        let inflight = arguments.dropFirst().first.flatMap(Int.init).map { min(max($0, 1), 16) } ?? 8
        let bodyBytes = 10 * 1024
        let root = try TemporaryDirectory()
        let fixtures = BuildProducts.packageRoot + "/Tests/Fixtures/https"

        // The loopback HTTPS server and its test CA.
        try shell("/bin/bash '\(fixtures)/make-test-ca.sh' '\(root.path)/ca'", in: root.path)
        let server = serverKind == "nginx" ? try Server.nginx(root: root.path, bodyBytes: bodyBytes) : try Server.python(root: root.path, fixtures: fixtures)
        let port = server.port
        print("server: \(server.name) on 127.0.0.1:\(port); brokered through \(BuildProducts.hostExecutable)")
        let url = "https://localhost:\(port)/huge/\(bodyBytes)"
        setenv("CONTEXT_HOST_EXTRA_CA_FILE", root.path + "/ca/ca.pem", 1)

        // Direct: the same transport the host uses, in this process.
        let transport = try AsyncHTTPTransport()
        let clock = ContinuousClock()
        let direct: @Sendable () async throws -> Int = {
            let response = try await transport.perform(BrokeredRequest(
                providerID: "bench", method: "GET", url: url, host: "localhost", port: port, address: "127.0.0.1", headers: [], body: nil,
                deadline: clock.now.advanced(by: .seconds(10)), maximumResponseBytes: 1 << 20))
            return response.body.count
        }
        for _ in 0..<50 { _ = try await direct() }
        let (times, directServer) = try await measuringServer(server) {
            var times: [Double] = []
            let start = clock.now
            for _ in 0..<count {
                let start = clock.now
                let bytes = try await direct()
                precondition(bytes == bodyBytes)
                times.append(microseconds(clock.now - start))
            }
            return ((times, microseconds(clock.now - start)), microseconds(clock.now - start))
        }
        let directP50 = percentile(times.0, 0.5)
        report("direct  ", times.0, bytes: bodyBytes, total: times.1, server: directServer)
        // The same, `inflight` at a time.
        let (directConcurrent, directConcurrentServer) = try await measuringServer(server) {
            let start = clock.now
            let all = try await withThrowingTaskGroup(of: [Double].self) { group in
                for lane in 0..<inflight {
                    let share = count / inflight + (lane < count % inflight ? 1 : 0)
                    group.addTask {
                        var lane: [Double] = []
                        for _ in 0..<share {
                            let start = clock.now
                            let bytes = try await direct()
                            precondition(bytes == bodyBytes)
                            lane.append(microseconds(clock.now - start))
                        }
                        return lane
                    }
                }
                var all: [Double] = []
                for try await lane in group { all += lane }
                return all
            }
            let total = microseconds(clock.now - start)
            return ((times: all, total: total), total)
        }

        // Brokered: the fetch fixture in a worker of the real context-host.
        _ = try root.write("manifests/fetch.yaml", TestManifest.brokered(
            id: "com.contexthost.fetch-fixture", title: "Fetch bench", iconName: "network", library: "libFixtureFetchProvider.so", port: port,
            networkTimeout: "60s", timeouts: "{ collect: 60s, preview: 10s, detail: 10s, encode: 10s }"))
        let client = try RPCClient(host: HostProcess(
            arguments: ["serve", "--no-watch", "--no-installed", "--manifests", root.path + "/manifests", "--log-level", "warning"],
            environment: ["CONTEXT_HOST_EXTRA_CA_FILE": root.path + "/ca/ca.pem", "XDG_STATE_HOME": root.path + "/state", "XDG_CACHE_HOME": root.path + "/cache"]))
        try client.initialize()
        func brokered(_ n: Int, inflight: Int = 1) throws -> JSONValue {
            let item: JSONValue = [
                "id": .string(UUID().uuidString.lowercased()), "providerId": "com.contexthost.fetch-fixture", "type": "fetch", "displayName": "fetch",
                "content": ["url": .string(url), "repeat": .number(Double(n)), "concurrency": .number(Double(inflight))],
                "createdAt": "2026-11-28T00:00:00Z",
            ]
            let id = client.send("items/describe", ["item": item])
            let response = try client.response(to: id, timeout: 120)
            guard let text = response["result"]?["text"]?.stringValue, let answer = try? JSONValue(parsing: Array(text.utf8)), answer["microseconds"] != nil else {
                fatalError("brokered fetch failed: \(response)")
            }
            return answer
        }
        _ = try brokered(50)
        let (answer, brokeredServer) = try await measuringServer(server) {
            let answer = try brokered(count)
            return (answer, answer["totalMicroseconds"]?.numberValue ?? 1)
        }
        let brokeredTimes = (answer["microseconds"]?.arrayValue ?? []).compactMap(\.numberValue)
        report("brokered", brokeredTimes, bytes: bodyBytes, total: answer["totalMicroseconds"]?.numberValue ?? 1, server: brokeredServer)
        print(String(format: "ratio p50 brokered/direct: %.2f (budget ≤ 1.3)", percentile(brokeredTimes, 0.5) / directP50))
        let (concurrent, concurrentServer) = try await measuringServer(server) {
            let answer = try brokered(count, inflight: inflight)
            return (answer, answer["totalMicroseconds"]?.numberValue ?? 1)
        }
        let concurrentBrokered = (concurrent["microseconds"]?.arrayValue ?? []).compactMap(\.numberValue)
        report("direct  ", directConcurrent.times, bytes: bodyBytes, total: directConcurrent.total, inflight: inflight, server: directConcurrentServer)
        report(
            "brokered", concurrentBrokered, bytes: bodyBytes, total: concurrent["totalMicroseconds"]?.numberValue ?? 1, inflight: inflight,
            server: concurrentServer)
        print(String(
            format: "brokered fetches/s through one worker, %d in flight: %.0f (budget ≥ 2,000)", inflight,
            Double(concurrentBrokered.count) / ((concurrent["totalMicroseconds"]?.numberValue ?? 1) / 1e6)))
        _ = try client.shutdown()
        server.stop()
    }
}
