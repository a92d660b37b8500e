// egress-bench: a 10 KB HTTPS GET on loopback, made directly with the broker's HTTP library
// (AsyncHTTPClient through `AsyncHTTPTransport`, in this process) and brokered (a provider in a
// worker process calls `context.fetch`; the host checks, pins, fetches with the same transport
// and answers). Both are timed where the fetch is made: here for the direct one, inside the
// provider (Tests/Fixtures/FixtureFetchProvider, `"repeat"`) for the brokered one.
//
//   swift build -c release      (context-host, egress-bench and the fixture library libFixtureFetchProvider.so)
//   .build/release/egress-bench [count] [inflight]  (default 1000 and 8; needs python3 and openssl)
//   Benchmarks/egress-library.sh                  (this, interleaved with libcurl's GET of the same URL)
//
// Issue 37's budget: brokered p50 ≤ 1.3 × direct p50 (one fetch at a time), and ≥ 2,000 fetches/s
// through one worker (`inflight` fetches at a time, each side: the direct ones in tasks of this
// process, the brokered ones in tasks of the provider).
import ContextHost
import ContextHostTestSupport
import ContextNetwork
import ContextProviderKit
import Foundation

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

func report(_ label: String, _ times: [Double], bytes: Int, total: Double, inflight: Int = 1) {
    print(String(
        format: "%@: %d × GET %d B: p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, %.0f fetches/s (%@)", label, times.count, bytes,
        percentile(times, 0.5), percentile(times, 0.9), percentile(times, 0.99), Double(times.count) / (total / 1e6),
        inflight == 1 ? "sequential" : "\(inflight) in flight"))
}

@main
struct EgressBench {
    static func main() async throws {
        let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init).map { min(max($0, 10), 1000) } ?? 1000
        let inflight = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init).map { min(max($0, 1), 16) } ?? 8
        let bodyBytes = 10 * 1024
        let root = try TemporaryDirectory()
        let fixtures = BuildProducts.packageRoot + "/Tests/Fixtures/https"

        // The loopback HTTPS server and its test CA.
        try shell("/bin/bash '\(fixtures)/make-test-ca.sh' '\(root.path)/ca'", in: root.path)
        try FileManager.default.createDirectory(atPath: root.path + "/recordings", withIntermediateDirectories: true)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "python3", fixtures + "/replay_server.py", "--cert", root.path + "/ca/server.pem", "--key", root.path + "/ca/server.key",
            "--recordings", root.path + "/recordings", "--log", "/dev/null", "--port-file", root.path + "/port",
        ]
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        var foundPort = 0
        for _ in 0..<500 where foundPort == 0 {
            foundPort = (try? String(contentsOfFile: root.path + "/port", encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
            usleep(20_000)
        }
        guard foundPort > 0 else { fatalError("the HTTPS server did not start") }
        let port = foundPort
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
        var times: [Double] = []
        let directStart = clock.now
        for _ in 0..<count {
            let start = clock.now
            let bytes = try await direct()
            precondition(bytes == bodyBytes)
            times.append(microseconds(clock.now - start))
        }
        let directP50 = percentile(times, 0.5)
        report("direct  ", times, bytes: bodyBytes, total: microseconds(clock.now - directStart))
        // The same, `inflight` at a time.
        let concurrentStart = clock.now
        let concurrentTimes = try await withThrowingTaskGroup(of: [Double].self) { group in
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
        let directConcurrent = (times: concurrentTimes, total: microseconds(clock.now - concurrentStart))

        // Brokered: the fetch fixture in a worker of the real context-host.
        _ = try root.write("manifests/fetch.yaml", """
            manifestVersion: 1
            id: com.contexthost.fetch-fixture
            title: Fetch bench
            iconName: network
            version: 0.0.1
            library: libFixtureFetchProvider.so
            collection: programmatic
            isolation: process
            network:
              timeout: 60s
              origins:
                - { origin: "https://localhost:\(port)", privateAddresses: true }
            timeouts: { collect: 60s, preview: 10s, detail: 10s, encode: 10s }
            """)
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
        let answer = try brokered(count)
        let brokeredTimes = (answer["microseconds"]?.arrayValue ?? []).compactMap(\.numberValue)
        report("brokered", brokeredTimes, bytes: bodyBytes, total: answer["totalMicroseconds"]?.numberValue ?? 1)
        print(String(format: "ratio p50 brokered/direct: %.2f (budget ≤ 1.3)", percentile(brokeredTimes, 0.5) / directP50))
        let concurrent = try brokered(count, inflight: inflight)
        let concurrentBrokered = (concurrent["microseconds"]?.arrayValue ?? []).compactMap(\.numberValue)
        report("direct  ", directConcurrent.times, bytes: bodyBytes, total: directConcurrent.total, inflight: inflight)
        report("brokered", concurrentBrokered, bytes: bodyBytes, total: concurrent["totalMicroseconds"]?.numberValue ?? 1, inflight: inflight)
        print(String(
            format: "brokered fetches/s through one worker, %d in flight: %.0f (budget ≥ 2,000)", inflight,
            Double(concurrentBrokered.count) / ((concurrent["totalMicroseconds"]?.numberValue ?? 1) / 1e6)))
        _ = try client.shutdown()
        server.terminate()
        server.waitUntilExit()
    }
}
