import ArgumentParser
import ContextHost
import ContextPackages
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `list`: providers in the order a client offers them, with their status and availability.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List providers by priority with their status and availability.",
            discussion: "Loads every provider as 'serve' would after 'initialize', then prints a table (or JSON with --json). Exits 1 if any manifest was rejected or any library failed to load.")

        @OptionGroup var options: HostOptions

        @Flag(help: "Print JSON (the providers/list result) instead of a table.")
        var json = false

        @OptionGroup var grants: GrantOptions

        @Option(help: ArgumentHelp("The locale titles are shown in.", valueName: "locale"))
        var locale: String = "en-US"

        @Flag(help: "List what `context-host install` installed (the lock file), without loading anything.")
        var installed = false

        func run() throws {
            if installed {
                try listInstalled()
                return
            }
            let outputFD = StdioServer.takeOverStandardOutput()
            let logger = options.bootstrapLogging()
            var configuration = options.hostConfiguration()
            configuration.stateDirectory = nil  // listing never touches drafts
            // Listing loads every provider, as it would at initialize before issue 28, so it
            // reports libraries that fail to open and each provider's own availability check.
            configuration.isolation.lazyWorkers = false
            let host = Host(configuration: configuration, logger: logger)
            host.initialize(client: ClientInfo(name: "context-host list", locale: locale, grantedPermissions: grants.permissions))
            host.registry.waitForLoads()
            let providers = host.providersList().providers.map(\.json)
            let text: String
            if json {
                text = JSONValue.array(providers).jsonString + "\n"
            } else {
                text = Self.table(providers)
            }
            var bytes = Array(text.utf8)
            _ = bytes.withUnsafeMutableBytes { write(outputFD, $0.baseAddress, $0.count) }
            for problem in host.registry.catalogProblems { writeStandardError(problem) }
            let broken = host.registry.entries().contains { $0.status == .rejected || $0.status == .failed }
            if broken { throw ExitCode(1) }
        }

        /// The lock file as a table (or JSON with --json).
        func listInstalled() throws {
            guard let locations = PackageLocations.standard() else {
                writeStandardError("error: no HOME and no XDG_CONFIG_HOME: no lock file to read.")
                throw ExitCode(2)
            }
            let lock: LockFile
            do {
                lock = try LockFile.load(file: locations.lockFile)
            } catch {
                throw fail(error)
            }
            if json {
                print(String(decoding: lock.encoded(), as: UTF8.self), terminator: "")
                return
            }
            var rows: [[String]] = [["ID", "VERSION", "PREVIOUS", "RUNTIME", "SIGNER", "PLATFORMS", "FOLDER"]]
            for entry in lock.providers {
                rows.append([
                    entry.id, entry.current.version, entry.previous?.version ?? "-", entry.current.runtime,
                    entry.current.signer ?? "unsigned", entry.current.libraries.map(\.platform).joined(separator: ","),
                    locations.versionDirectory(id: entry.id, version: entry.current.version),
                ])
            }
            let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                var line = ""
                for (column, cell) in row.enumerated() {
                    line += cell
                    if column < row.count - 1 { line += String(repeating: " ", count: widths[column] - cell.count + 2) }
                }
                print(line)
            }
            if lock.providers.isEmpty { print("(nothing installed; lock file: \(locations.lockFile))") }
        }

        /// "full", "partial (2 missing)", "off", "none (in-process)" or "-".
        static func sandboxCell(_ sandbox: JSONValue?) -> String {
            guard let sandbox, let policy = sandbox["policy"]?.stringValue else { return "-" }
            switch policy {
            case "off": return "off"
            case "none": return "none (in-process)"
            default:
                let missing = sandbox["missing"]?.arrayValue?.count ?? 0
                return missing == 0 ? "full" : "partial (\(missing) missing)"
            }
        }

        /// A readable table; problems are spelled out under it.
        /// What a provider may reach and which secrets are set, for the notes under the table.
        static func networkNote(_ provider: JSONValue) -> String? {
            var parts: [String] = []
            switch provider["networkAccess"]?.stringValue {
            case "raw": parts.append("network: raw sockets to any host (the 'network' permission, the broader grant)")
            case "brokered": parts.append("network: through the host only")
            default: break
            }
            if let origins = provider["origins"]?.arrayValue, !origins.isEmpty {
                let shown = origins.map { origin -> String in
                    var text = origin["origin"]?.stringValue ?? "(unset)"
                    if let setting = origin["setting"]?.stringValue { text += " (setting \(setting))" }
                    if origin["privateAddresses"]?.boolValue == true { text += " [private addresses allowed]" }
                    return text
                }
                parts.append("origins: " + shown.joined(separator: ", "))
            }
            if let secrets = provider["secrets"]?.objectValue, secrets.keys.count > 0 {
                parts.append("secrets: " + secrets.keys.sorted().map { "\($0) (\(secrets[$0]?.boolValue == true ? "set" : "not set"))" }.joined(separator: ", "))
            }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }

        static func table(_ providers: [JSONValue]) -> String {
            var rows: [[String]] = [["PRIORITY", "ID", "TITLE", "STATUS", "AVAILABLE", "SANDBOX", "LIBRARY / MANIFEST"]]
            var notes: [String] = []
            for provider in providers {
                let id = provider["id"]?.stringValue ?? "-"
                let available = provider["available"]?.boolValue == true
                let where_ = provider["libraryPath"]?.stringValue ?? provider["manifestPath"]?.stringValue ?? ""
                rows.append([
                    provider["priority"]?.intValue.map(String.init) ?? "-",
                    id,
                    provider["title"]?.stringValue ?? "-",
                    provider["status"]?.stringValue ?? "-",
                    available ? "yes" : "no",
                    sandboxCell(provider["sandbox"]),
                    where_,
                ])
                if let sandbox = provider["sandbox"], let missing = sandbox["missing"]?.arrayValue, !missing.isEmpty,
                    sandbox["policy"]?.stringValue != "off"
                {
                    let enforced = sandbox["enforced"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    notes.append("\(id): sandbox \(sandbox["policy"]?.stringValue ?? ""): enforced: \(enforced.isEmpty ? "nothing" : enforced.joined(separator: ", "))"
                        + missing.map { "\n    not enforced: \($0["layer"]?.stringValue ?? ""): \($0["reason"]?.stringValue ?? "")" }.joined())
                }
                if let note = provider["isolationNote"]?.stringValue { notes.append("\(id): \(note)") }
                if let network = networkNote(provider) { notes.append("\(id): \(network)") }
                if let reason = provider["unavailableReason"], ["loaded", "discovered", "disabled"].contains(provider["status"]?.stringValue ?? "") {
                    notes.append("\(id): unavailable (\(reason["code"]?.stringValue ?? "")): \(reason["message"]?.stringValue ?? "")")
                }
                if let diagnostics = provider["diagnostics"]?.arrayValue, !diagnostics.isEmpty {
                    for diagnostic in diagnostics {
                        let file = diagnostic["file"]?.stringValue ?? ""
                        let line = diagnostic["line"]?.intValue ?? 0
                        let column = diagnostic["column"]?.intValue ?? 0
                        notes.append("\(file):\(line):\(column): error: [\(diagnostic["code"]?.stringValue ?? "")] \(diagnostic["message"]?.stringValue ?? "")\n    fix: \(diagnostic["hint"]?.stringValue ?? "")")
                    }
                } else if let error = provider["error"] {
                    notes.append("\(id): [\(error["code"]?.stringValue ?? "")] \(error["message"]?.stringValue ?? "")\n    fix: \(error["hint"]?.stringValue ?? "")")
                }
            }
            var widths = [Int](repeating: 0, count: rows[0].count)
            for row in rows {
                for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
            }
            var text = ""
            for row in rows {
                let cells = row.enumerated().map { index, cell in
                    index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
                }
                text += cells.joined(separator: "  ") + "\n"
            }
            if providers.isEmpty { text += "(no manifests found)\n" }
            if !notes.isEmpty { text += "\n" + notes.joined(separator: "\n") + "\n" }
            return text
        }
    }
}
