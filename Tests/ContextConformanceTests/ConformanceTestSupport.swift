import ContextConformance
import ContextHostTestSupport
import Foundation

/// Shared set-up: options pointing at the build folder, and the fixture manifests.
enum ConformanceTestSupport {
    static let fixtures = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-conformance"
    static let scripts = BuildProducts.packageRoot + "/Tests/Fixtures/conformance"
    static let bundled = BuildProducts.packageRoot + "/manifests"

    /// Options for the test build: libraries and `context-host` from the build folder.
    static func options(modes: [ConformanceMode] = [.worker, .inProcess]) -> ConformanceOptions {
        var options = ConformanceOptions()
        options.modes = modes
        options.libraryDirectories = [BuildProducts.directory]
        options.hostExecutable = BuildProducts.hostExecutable
        return options
    }

    /// A conformance fixture manifest by name (`bad-chip` → …/bad-chip.yaml).
    static func fixture(_ name: String) -> String { fixtures + "/\(name).yaml" }

    /// Every bundled manifest (the folder as it is when the tests start).
    static var bundledManifests: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: bundled)) ?? [])
            .filter { $0.hasSuffix(".yaml") && !$0.hasPrefix(".") }.sorted().map { bundled + "/" + $0 }
    }

    /// Runs blocking work (spawning and waiting for processes) on a Dispatch thread: blocking
    /// Swift's cooperative pool (2 threads on a 2-core machine) would stall every async test.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// `context-host ARGUMENTS…`, off the cooperative pool.
    static func cli(_ arguments: [String]) async throws -> CommandResult {
        try await blocking { try CommandRunner.run(arguments) }
    }

    /// A program, off the cooperative pool.
    static func program(_ executable: String, _ arguments: [String], input: String? = nil) async throws -> (status: Int32, output: String) {
        try await blocking { try Shell.runProgram(executable, arguments, input: input) }
    }
}
