import ContextHost
import ContextProviderKit

/// How a conformance run is set up. The defaults suit `context-host conformance` and a
/// provider author's own tests alike.
public struct ConformanceOptions: Sendable {
    /// The modes to run each provider in, in order. Default: worker, then in-process. When a
    /// provider crashed its worker, the in-process run is skipped (it would take the runner down).
    public var modes: [ConformanceMode] = [.worker, .inProcess]
    /// Run only these check ids (nil: all). Checks a selected check depends on still run
    /// (silently) to produce its inputs.
    public var only: Set<String>?
    /// Skip these check ids.
    public var skip: Set<String> = []
    /// Expected failures (`--baseline FILE`).
    public var baseline: ConformanceBaseline?
    /// Folders searched for provider libraries after each manifest's own folder
    /// (like `--library-path`).
    public var libraryDirectories: [String] = []
    /// The `context-host` executable, for worker mode and the stdout probe. nil: the running
    /// executable when it is `context-host`, else `context-host` next to the provider's library
    /// (where `swift build` puts both).
    public var hostExecutable: String?
    /// Setting values by provider id, overriding manifest defaults (as a host configuration would).
    public var settings: [String: [String: JSONValue]] = [:]
    /// Allow manifest `library` paths that leave their folder.
    public var allowOutsideLibraryPaths = false
    /// Calls per timing check (p95 over this many). Default 20.
    public var timingSamples = 20
    /// The fraction of the manifest's timeout a p95 may use. Default 0.5: a provider that needs
    /// more than half its timeout on an idle machine times out under load.
    public var timingBudgetFraction = 0.5
    /// Parallel calls in `concurrency.parallel-calls`. Default 16.
    public var parallelCalls = 16
    /// The worker sandbox in worker mode (`--sandbox`), as the host applies it. Default
    /// best-effort; `required` fails a provider whose worker cannot have every layer.
    public var sandbox: IsolationConfiguration.SandboxPolicy = .bestEffort

    /// Default options.
    public init() {}

    /// Whether check `id` is reported (selected and not skipped).
    public func isSelected(_ id: String) -> Bool {
        if skip.contains(id) { return false }
        if let only { return only.contains(id) }
        return true
    }
}

/// Expected failures, so CI can adopt the runner before every provider passes.
///
/// The file has one entry per line: `PROVIDER CHECK-ID [MODE]`, where PROVIDER is a provider id
/// (or a manifest path, for manifests without a readable id) and MODE is `worker` or `in-process`
/// (both when left out). `#` starts a comment. A listed failure is reported as
/// `expected-failure` and does not fail the run; an entry that matches no failure of a check that
/// ran is stale and fails the run, so the baseline only ever shrinks.
public struct ConformanceBaseline: Sendable, Hashable {
    /// One entry.
    public struct Entry: Sendable, Hashable {
        public var provider: String
        public var checkID: String
        public var mode: ConformanceMode?
        /// `file:line`.
        public var location: String
        /// The line as written, without the comment.
        public var text: String
    }

    /// The entries in file order.
    public var entries: [Entry]

    /// A baseline of these entries.
    public init(entries: [Entry]) { self.entries = entries }

    /// A problem in a baseline file.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses baseline text; `file` names it in messages.
    public init(parsing text: String, file: String) throws(ParseError) {
        var entries: [Entry] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.prefix { $0 != "#" }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            if words.isEmpty { continue }
            let location = "\(file):\(index + 1)"
            guard words.count == 2 || words.count == 3 else {
                throw ParseError(description: "\(location): expected 'PROVIDER CHECK-ID [MODE]', got '\(line.trimmingCharacters())'")
            }
            guard ConformanceCheck.named(words[1]) != nil else {
                throw ParseError(description: "\(location): unknown check id '\(words[1])'; the ids are listed in docs/conformance.md")
            }
            var mode: ConformanceMode?
            if words.count == 3 {
                guard let parsed = ConformanceMode(rawValue: words[2]) else {
                    throw ParseError(description: "\(location): unknown mode '\(words[2])'; expected worker or in-process")
                }
                mode = parsed
            }
            entries.append(Entry(provider: words[0], checkID: words[1], mode: mode, location: location, text: words.joined(separator: " ")))
        }
        self.entries = entries
    }

    /// Marks listed failures as expected and returns the stale entries.
    func apply(to reports: inout [ProviderReport]) -> [StaleBaselineEntry] {
        var used = Set<Int>()
        var ran = Set<Int>()
        for reportIndex in reports.indices {
            let report = reports[reportIndex]
            for resultIndex in report.results.indices {
                let result = report.results[resultIndex]
                for (entryIndex, entry) in entries.enumerated()
                where entry.checkID == result.id && (entry.provider == report.providerId || entry.provider == report.manifestPath)
                    && (entry.mode == nil || entry.mode == report.mode)
                {
                    if result.status != .skipped { ran.insert(entryIndex) }
                    if result.status == .failed {
                        reports[reportIndex].results[resultIndex].status = .expectedFailure
                        used.insert(entryIndex)
                    }
                }
            }
        }
        return entries.enumerated().compactMap { index, entry in
            guard ran.contains(index), !used.contains(index) else { return nil }
            return StaleBaselineEntry(
                entry: entry.text, location: entry.location,
                reason: "the check passes now: remove the entry from the baseline")
        }
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice.removeLast() }
        return String(slice)
    }
}
