import ContextHost
import ContextHostTestSupport
import ContextProtocol
import Foundation
import Testing

/// Settings at the edge of their types never reach a Swift trap: the command line refuses
/// durations and sizes its conversions cannot hold, naming the option and its range, and an
/// embedder's extreme `IsolationConfiguration` values are clamped where they are converted.
/// (Before: `--max-call-timeout 1e300` and `inf`, `--worker-idle-cpu 1e300` died of SIGILL in
/// `Int64(seconds * 1000)`; a `cancelGrace` near `Int64.max` seconds trapped in
/// `Duration.milliseconds` when a call timed out; a `workerMemoryLimit` of `Int.max` in the
/// address space sum when a worker started.)
@Suite("Extreme settings")
struct ExtremeSettingsTests {
    @Test("out-of-range numeric options are refused with the option and its range named", arguments: [
        ["--max-call-timeout", "1e300"], ["--max-call-timeout", "inf"], ["--max-call-timeout", "nan"],
        ["--worker-idle-cpu", "1e300"], ["--worker-idle-cpu", "inf"], ["--worker-idle-timeout", "inf"],
        ["--cancel-grace", "9223372036854775807"], ["--crash-window", "9223372036854775807"],
        ["--worker-memory-limit", "9223372036854775807"],
    ])
    func refusedOptions(_ option: [String]) throws {
        let result = try CommandRunner.run(["serve", "--no-state", "--manifests", "/nowhere"] + option)
        #expect(result.status == 64, "\(option): \(result.standardError)")
        #expect(result.standardError.contains(option[0]), "\(option): \(result.standardError)")
        #expect(result.standardError.contains("at most") || result.standardError.contains(" to "), "\(option): \(result.standardError)")
    }

    @Test("the largest accepted values still serve")
    func largestAccepted() throws {
        let result = try CommandRunner.run([
            "serve", "--no-state", "--manifests", "/nowhere", "--max-call-timeout", "31536000", "--worker-idle-cpu", "31536000",
            "--worker-idle-timeout", "31536000", "--cancel-grace", "31536000000", "--crash-window", "31536000",
            "--worker-memory-limit", "1073741824",
        ])
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test("an embedder's extreme durations and memory cap: a worker starts and answers, and a hung call times out")
    func embedderExtremes() async throws {
        try BuildProducts.checkBuilt()
        let forever = Duration(secondsComponent: .max, attosecondsComponent: 0)
        var configuration = HostConfiguration(
            manifestDirectories: [BuildProducts.packageRoot + "/Tests/Fixtures/manifests-isolated"],
            libraryDirectories: [BuildProducts.directory])
        configuration.isolation.policy = .process
        configuration.isolation.workerExecutable = BuildProducts.hostExecutable
        configuration.isolation.workerMemoryLimit = .max
        configuration.isolation.cancelGrace = forever
        configuration.isolation.crashWindow = forever
        configuration.isolation.workerIdleTimeout = forever
        configuration.isolation.idleCPUBudget = forever
        configuration.isolation.maximumCallTimeout = forever
        let host = try InProcessHost(configuration: configuration)
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "extreme-settings")))
        let misbehaving = "com.contexthost.misbehaving"
        func item(_ content: JSONValue) -> ContextItem {
            ContextItem(providerId: misbehaving, type: "fixture", displayName: "Fixture", content: content)
        }
        let chip = try await host.preview(item([:]))
        #expect(!chip.title.isEmpty)
        do {
            _ = try await host.preview(item(["misbehave": "hang"]))
            Issue.record("a hung preview was answered")
        } catch {
            // The manifest's 300 ms, under the host's cap; the cancel grace then never runs out.
            #expect(error.code == .providerTimedOut, "\(error)")
        }
        await host.close()
    }

    @Test("Duration.milliseconds rounds up and saturates instead of trapping")
    func saturatingMilliseconds() {
        #expect(Duration.microseconds(1500).milliseconds == 2)
        #expect(Duration(secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999).milliseconds == .max)
        #expect(Duration(secondsComponent: .min, attosecondsComponent: 0).milliseconds == .min)
        #expect(Duration.milliseconds(Int64.max).milliseconds == Int(Int64.max))
    }
}
