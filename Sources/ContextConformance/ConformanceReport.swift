import ContextProviderKit

/// Where the provider runs during a conformance run.
public enum ConformanceMode: String, Sendable, Hashable, CaseIterable {
    /// Loaded into the runner's process, as `isolation: in-process`.
    case inProcess = "in-process"
    /// In a `context-host worker` process, as `isolation: process`.
    case worker
}

/// The outcome of one check.
public enum CheckStatus: String, Sendable, Hashable {
    /// The check passed.
    case passed
    /// The check passed with a remark worth reading (not a failure).
    case warning
    /// The check failed.
    case failed
    /// A failure listed in the baseline (does not fail the run).
    case expectedFailure = "expected-failure"
    /// Not run: not applicable, deselected, or blocked by an earlier failure.
    case skipped
}

/// The result of one check for one provider in one mode.
public struct CheckResult: Sendable, Hashable {
    /// The check's stable id.
    public var id: String
    /// The outcome.
    public var status: CheckStatus
    /// One sentence: what passed, or what is wrong.
    public var message: String
    /// Every problem found (the first few lines of evidence), and for failures how to fix it.
    public var details: [String]
    /// Wall time of the check, in milliseconds.
    public var durationMs: Double

    /// Creates a result.
    public init(id: String, status: CheckStatus, message: String, details: [String] = [], durationMs: Double = 0) {
        self.id = id
        self.status = status
        self.message = message
        self.details = details
        self.durationMs = durationMs
    }
}

/// Every check for one manifest in one mode.
public struct ProviderReport: Sendable, Hashable {
    /// The manifest file as named.
    public var manifestPath: String
    /// The provider id, when the manifest could be read.
    public var providerId: String?
    /// The mode the checks ran in.
    public var mode: ConformanceMode
    /// The checks, in `ConformanceCheck.all` order.
    public var results: [CheckResult]

    /// The checks that failed (not counting expected failures).
    public var failures: [CheckResult] { results.filter { $0.status == .failed } }
    /// `providerId`, else the manifest path.
    public var name: String { providerId ?? manifestPath }
}

/// A baseline entry that matched no failure: the check passes now (or does not exist).
public struct StaleBaselineEntry: Sendable, Hashable {
    /// The entry as written (`provider-id check-id [mode]`).
    public var entry: String
    /// The baseline file and line.
    public var location: String
    /// Why it is stale.
    public var reason: String
}

/// The whole run.
public struct ConformanceReport: Sendable, Hashable {
    /// One report per manifest and mode, in the order run.
    public var providers: [ProviderReport]
    /// Baseline entries that no longer match a failure.
    public var staleBaselineEntries: [StaleBaselineEntry] = []
    /// The provider gallery written with the report (`context-host conformance --gallery DIR`):
    /// the path of its `index.html`. Nil when none was asked for or it could not be written.
    public var galleryPath: String?
    /// Why the gallery asked for could not be written.
    public var galleryProblem: String?

    /// Creates a report.
    public init(providers: [ProviderReport], staleBaselineEntries: [StaleBaselineEntry] = []) {
        self.providers = providers
        self.staleBaselineEntries = staleBaselineEntries
    }

    /// How many results have `status`.
    public func count(_ status: CheckStatus) -> Int {
        providers.reduce(0) { $0 + $1.results.filter { $0.status == status }.count }
    }

    /// Every failed check, as `provider-id mode check-id`.
    public var failureSummaries: [String] {
        providers.flatMap { provider in provider.failures.map { "\(provider.name) \(provider.mode.rawValue) \($0.id): \($0.message)" } }
    }

    /// Whether the run passed: no failures and no stale baseline entries.
    public var passed: Bool { count(.failed) == 0 && staleBaselineEntries.isEmpty }

    /// The process exit status: 0 passed, 1 a check failed or a baseline entry is stale.
    public var exitCode: Int32 { passed ? 0 : 1 }

    /// The ids of the failed checks of one provider (by id or manifest path) in one mode, sorted.
    public func failedCheckIDs(provider: String, mode: ConformanceMode) -> [String] {
        providers.filter { ($0.providerId == provider || $0.manifestPath == provider) && $0.mode == mode }
            .flatMap { $0.failures.map(\.id) }.sorted()
    }
}

/// The run failed: thrown by `Conformance.verify`, with the readable report.
public struct ConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// The report.
    public var report: ConformanceReport
    /// The plain-text report.
    public var description: String { ConformanceFormatter.text(report, colour: false) }
}
