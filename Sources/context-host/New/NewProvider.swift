import ArgumentParser
import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `new`: scaffolding for provider authors.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a new project from a template.",
            subcommands: [NewProvider.self])
    }

    /// `new provider NAME`: writes a separate, ready-to-build provider package.
    struct NewProvider: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "provider",
            abstract: "Write a ready-to-build provider package (Swift or C) with a manifest, a test and a README.",
            discussion: """
                Swift: a SwiftPM package that depends on ContextProviderKit (by path: this binary's \
                ContextHost checkout, or --kit-path) and builds lib<Name>Provider.so. C: a Makefile, a \
                source file against a vendored context_provider.h, and a test script. Either way the \
                README gives the three commands: build, run in a host, run conformance. See \
                docs/writing-a-provider.md.
                """)

        @Argument(help: ArgumentHelp("The provider's name, e.g. Weather or 'recent-files' (letters and digits; '-', '_' and spaces separate words).", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("swift or c.", valueName: "language"))
        var language: ScaffoldLanguage = .swift

        @Option(help: ArgumentHelp("The folder to create (must not exist or be empty). Default: ./<Name>Provider.", valueName: "dir"))
        var output: String?

        @Option(help: ArgumentHelp("The provider id (reverse-DNS). Default: com.example.<name>.", valueName: "id"))
        var id: String?

        @Option(help: ArgumentHelp(
            "The ContextHost package the Swift scaffold depends on (a folder). Default: the checkout this context-host was built from.",
            valueName: "dir"))
        var kitPath: String?

        func validate() throws {
            guard ScaffoldNames(name) != nil else {
                throw ValidationError("'\(name)' is not a usable name: use letters and digits, starting with a letter (e.g. Weather, recent-files).")
            }
            if let id, !ScaffoldNames.isValidID(id) {
                throw ValidationError("--id '\(id)' is not a reverse-DNS id: lowercase letters, digits and '-', at least two labels separated by dots (e.g. com.example.weather).")
            }
        }

        func run() throws {
            let names = ScaffoldNames(name)!
            let directory = output ?? names.product
            try ScaffoldWriter.prepare(directory: directory)
            let hostExecutable = HostOptions.executableDirectory().map { $0 + "/context-host" } ?? "context-host"
            var parameters = ScaffoldParameters(names: names, id: id ?? "com.example.\(names.slug)", hostExecutable: hostExecutable)
            let files: [ScaffoldFile]
            parameters.kitPath = try kitPath.map(ScaffoldWriter.absolutePath) ?? ScaffoldWriter.defaultKitPath()
            switch language {
            case .swift:
                guard parameters.kitPath != nil else {
                    throw ValidationError(
                        "Could not find the ContextHost checkout this context-host was built from. Pass --kit-path DIR, the folder of a ContextHost checkout (the one with its Package.swift); the Swift scaffold depends on its ContextProviderKit.")
                }
                files = ScaffoldTemplates.swiftPackage(parameters)
            case .c:
                files = ScaffoldTemplates.cProject(parameters)
            }
            for file in files { try ScaffoldWriter.write(file, into: directory) }
            print("Created \(language.rawValue == "c" ? "a C" : "a Swift") provider '\(names.title)' (\(parameters.id)) in \(directory):")
            for file in files { print("  \(file.path)") }
            print("Next: cd \(directory) and follow README.md (build, run in a host, run conformance).")
        }
    }
}

/// The languages `new provider` writes.
enum ScaffoldLanguage: String, ExpressibleByArgument, CaseIterable {
    case swift, c
}

/// The names derived from the user's NAME: `recent-files` → `RecentFiles`, `RecentFilesProvider`,
/// `recent-files`, `Recent Files`.
struct ScaffoldNames {
    /// UpperCamelCase, e.g. `RecentFiles`.
    var pascal: String
    /// The library product and target, e.g. `RecentFilesProvider`.
    var product: String { pascal + "Provider" }
    /// Lowercase words joined by `-`, e.g. `recent-files` (manifest file name and id suffix).
    var slug: String
    /// Lowercase words joined by `_`, e.g. `recent_files` (C identifiers and file names).
    var snake: String
    /// Words separated by spaces, e.g. `Recent Files`.
    var title: String

    init?(_ raw: String) {
        // Split on separators and on lower→upper case changes ("RecentFiles" → Recent, Files).
        var words: [String] = []
        var current = ""
        var previousLower = false
        for scalar in raw.unicodeScalars {
            let isLetter = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
            let isDigit = scalar >= "0" && scalar <= "9"
            if scalar == "-" || scalar == "_" || scalar == " " || scalar == "." {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousLower = false
                continue
            }
            guard isLetter || isDigit else { return nil }
            let isUpper = scalar >= "A" && scalar <= "Z"
            if isUpper && previousLower && !current.isEmpty {
                words.append(current)
                current = ""
            }
            current.unicodeScalars.append(scalar)
            previousLower = !isUpper
        }
        if !current.isEmpty { words.append(current) }
        // A trailing "Provider" word is implied.
        if words.count > 1, words.last?.lowercased() == "provider" { words.removeLast() }
        guard let first = words.first?.unicodeScalars.first, (first >= "a" && first <= "z") || (first >= "A" && first <= "Z") else {
            return nil
        }
        let capitalized = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }
        pascal = capitalized.joined()
        slug = words.map { $0.lowercased() }.joined(separator: "-")
        snake = words.map { $0.lowercased() }.joined(separator: "_")
        title = capitalized.joined(separator: " ")
    }

    /// The manifest's id rule (docs/manifest.md).
    static func isValidID(_ id: String) -> Bool {
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, id.utf8.count <= 255 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.first != "-" && label.last != "-"
                && label.unicodeScalars.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" }
        }
    }
}

/// Everything a template needs.
struct ScaffoldParameters {
    var names: ScaffoldNames
    var id: String
    /// The `context-host` the README's commands call.
    var hostExecutable: String
    /// The ContextHost checkout (required for the Swift scaffold; used for the schema hint).
    var kitPath: String?
}

/// One file of a scaffold, relative to its folder.
struct ScaffoldFile {
    var path: String
    var contents: String
    var executable = false
}

/// `write(2)`, named apart from `ScaffoldWriter.write`.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}

/// Writes scaffold files with plain POSIX calls.
enum ScaffoldWriter {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates `directory` (and its parents); refuses a folder that already has files in it.
    static func prepare(directory: String) throws {
        if let entries = ManifestFileSystem.directoryEntries(directory) {
            guard entries.isEmpty else {
                throw Failure(description: "\(directory) already exists and is not empty; choose another --output folder.")
            }
            return
        }
        try makeDirectories(directory)
    }

    static func write(_ file: ScaffoldFile, into directory: String) throws {
        try writeFile(file, into: directory)
    }

    private static func writeFile(_ file: ScaffoldFile, into directory: String) throws {
        let path = directory + "/" + file.path
        if let slash = path.lastIndex(of: "/") { try makeDirectories(String(path[..<slash])) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, file.executable ? 0o755 : 0o644)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(file.contents.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            written += result
        }
    }

    static func makeDirectories(_ path: String) throws {
        if let failure = Directories.make(path, mode: 0o755) {
            throw Failure(description: "cannot create \(failure.folder): \(String(cString: strerror(failure.errno)))")
        }
    }

    static func absolutePath(_ path: String) throws -> String {
        guard let resolved = realpath(path, nil) else {
            throw Failure(description: "--kit-path \(path): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The ContextHost checkout the running binary was built in: `.build/<triple>/<config>/context-host`
    /// → three folders up, if that folder's Package.swift declares the package "ContextHost".
    static func defaultKitPath() throws -> String? {
        guard var directory = HostOptions.executableDirectory() else { return nil }
        if let resolved = realpath(directory, nil) {
            directory = String(cString: resolved)
            free(resolved)
        }
        for _ in 0..<3 {
            guard let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { return nil }
            directory = String(directory[..<slash])
        }
        guard let manifest = readFile(directory + "/Package.swift"), manifest.contains("name: \"ContextHost\"") else { return nil }
        return directory
    }

    static func readFile(_ path: String) -> String? {
        (try? FileBytes.read(path)).map { String(decoding: $0, as: UTF8.self) }
    }
}
