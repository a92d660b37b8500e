import ArgumentParser
import ContextConformance
import ContextHost
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `conformance PATH…`: runs the provider conformance checks (docs/conformance.md).
    struct Conformance: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that providers load and behave as any host expects.",
            discussion: """
                Loads each provider named by a manifest (or every manifest in a folder) the way the host does, \
                in a worker process and in-process, and runs the checks listed in docs/conformance.md. \
                Exit status: 0 every check passed (warnings allowed), 1 a check failed or a baseline entry is stale, \
                2 the baseline file or a check id is wrong.
                """)

        @Argument(help: ArgumentHelp("Manifest files, or folders of manifests.", valueName: "path"))
        var paths: [String] = []

        @Option(help: ArgumentHelp("Where providers run: worker, in-process or both.", valueName: "mode"))
        var mode: String = "both"

        @Option(name: .customLong("check"), help: ArgumentHelp("Run only this check (repeatable).", valueName: "id"))
        var checks: [String] = []

        @Option(name: .customLong("skip"), help: ArgumentHelp("Skip this check (repeatable).", valueName: "id"))
        var skips: [String] = []

        @Option(help: ArgumentHelp("A file of expected failures: 'PROVIDER CHECK-ID [MODE]' per line.", valueName: "file"))
        var baseline: String?

        @Option(help: ArgumentHelp("Report format: text, tap, junit or json.", valueName: "format"))
        var format: String = "text"

        @Option(name: .customLong("output"), help: ArgumentHelp("Write the report to this file instead of stdout.", valueName: "file"))
        var outputFile: String?

        @OptionGroup var libraries: LibraryPathOptions

        @Option(name: .customLong("set"), help: ArgumentHelp(
            "A setting value, as PROVIDER-ID.NAME=VALUE (repeatable); overrides the manifest default.", valueName: "setting"))
        var settingValues: [String] = []

        @Option(help: ArgumentHelp("Calls per timing check (p95 over this many).", valueName: "count"))
        var timingSamples: Int = 20

        @Option(help: ArgumentHelp(
            "The worker sandbox in worker mode: required (fail a provider whose worker lacks a layer), best-effort (default) or off.",
            valueName: "policy"))
        var sandbox: IsolationConfiguration.SandboxPolicy = .bestEffort

        @Flag(name: .customLong("colour"), inversion: .prefixedNo, help: "Colour the text report (default: when stdout is a terminal).")
        var colour: Bool?

        @Option(name: .customLong("gallery"), help: ArgumentHelp(
            "Also write the provider gallery (index.html, gallery.json) of the checked providers into this folder; the report names it.",
            valueName: "dir"))
        var galleryDirectory: String?

        @Flag(help: "List the checks and exit.")
        var listChecks = false

        mutating func validate() throws {
            if listChecks { return }
            guard !paths.isEmpty else { throw ValidationError("Name at least one manifest or folder, e.g. 'context-host conformance manifests/'.") }
            guard ["worker", "in-process", "both"].contains(mode) else {
                throw ValidationError("--mode must be worker, in-process or both (got '\(mode)').")
            }
            guard ConformanceFormat(rawValue: format) != nil else {
                throw ValidationError("--format must be text, tap, junit or json (got '\(format)').")
            }
            guard timingSamples >= 1 else { throw ValidationError("--timing-samples must be at least 1.") }
        }

        func run() throws {
            // Providers loaded in-process must not be able to corrupt the report.
            let outputFD = StdioServer.takeOverStandardOutput()
            if listChecks {
                let text = ConformanceCheck.all.map { "\($0.id)\n    \($0.summary)" }.joined(separator: "\n") + "\n"
                writeAll(outputFD, text)
                return
            }
            var options = ConformanceOptions()
            options.modes = mode == "both" ? [.worker, .inProcess] : [mode == "worker" ? .worker : .inProcess]
            for id in checks + skips where ConformanceCheck.named(id) == nil {
                writeStandardError("error: unknown check id '\(id)'. Run 'context-host conformance --list-checks' for the ids.")
                throw ExitCode(2)
            }
            if !checks.isEmpty { options.only = Set(checks) }
            options.skip = Set(skips)
            options.libraryDirectories = libraries.directories + [HostOptions.executableDirectory()].compactMap { $0 }
            options.allowOutsideLibraryPaths = libraries.allowOutside
            options.timingSamples = timingSamples
            options.sandbox = sandbox
            for assignment in settingValues {
                guard let equals = assignment.firstIndex(of: "="), let dot = assignment[..<equals].lastIndex(of: ".") else {
                    writeStandardError("error: --set expects PROVIDER-ID.NAME=VALUE, got '\(assignment)'.")
                    throw ExitCode(2)
                }
                let provider = String(assignment[..<dot])
                let name = String(assignment[assignment.index(after: dot)..<equals])
                options.settings[provider, default: [:]][name] = .string(String(assignment[assignment.index(after: equals)...]))
            }
            if let baseline {
                guard let bytes = try? FileBytes.read(baseline) else {
                    writeStandardError("error: cannot read the baseline file '\(baseline)'.")
                    throw ExitCode(2)
                }
                do throws(ConformanceBaseline.ParseError) {
                    options.baseline = try ConformanceBaseline(parsing: String(decoding: bytes, as: UTF8.self), file: baseline)
                } catch {
                    writeStandardError("error: \(error.description)")
                    throw ExitCode(2)
                }
            }
            var report = ContextConformance.Conformance.runBlocking(paths, options: options)
            if let galleryDirectory { attachGallery(galleryDirectory, to: &report) }
            let useColour = colour ?? (outputFile == nil && isatty(outputFD) == 1 && getenv("NO_COLOR") == nil)
            let text = ConformanceFormatter.render(report, format: ConformanceFormat(rawValue: format) ?? .text, colour: useColour)
            if let outputFile {
                let fd = open(outputFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else {
                    writeStandardError("error: cannot write '\(outputFile)': \(String(cString: strerror(errno))).")
                    throw ExitCode(2)
                }
                writeAll(fd, text)
                close(fd)
                writeStandardError("\(report.passed ? "PASS" : "FAIL"): report written to \(outputFile)")
            } else {
                writeAll(outputFD, text)
            }
            if report.exitCode != 0 { throw ExitCode(report.exitCode) }
        }

        /// Writes the gallery of the checked manifests (served by a host started on their folders,
        /// in worker processes unless `--mode in-process`) and records its path in the report.
        private func attachGallery(_ directory: String, to report: inout ConformanceReport) {
            var folders: [String] = []
            var manifests: [String] = []
            for provider in report.providers where !manifests.contains(provider.manifestPath) {
                manifests.append(provider.manifestPath)
                let folder = provider.manifestPath.lastIndex(of: "/").map { String(provider.manifestPath[..<$0]) } ?? "."
                if !folders.contains(folder) { folders.append(folder.isEmpty ? "/" : folder) }
            }
            var arguments: [String] = []
            for folder in folders { arguments += ["--manifests", folder] }
            arguments += libraries.serveArguments
            arguments += ["--isolation", mode == "in-process" ? "in-process" : "process", "--log-level", "error"]
            do {
                report.galleryPath = try GalleryWriter.generate(in: directory, serveArguments: arguments, manifestPaths: manifests)
            } catch {
                report.galleryProblem = "\(error)"
                writeStandardError("error: the gallery was not written: \(error)")
            }
        }

        private func writeAll(_ fd: Int32, _ text: String) {
            let bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                offset += count
            }
        }
    }

    /// `conformance-probe`: runs a provider for `robustness.stdout-clean` (internal; hidden).
    struct ConformanceProbe: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conformance-probe",
            abstract: "Replay calls to a provider with stdout left alone (internal; started by 'conformance').",
            shouldDisplay: false)

        func run() throws {
            StdoutProbe.probeMain()
        }
    }
}
