import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder to search for manifests.
package struct ManifestSearchPath: Sendable, Hashable {
    package enum Source: String, Sendable, Hashable {
        /// `--manifests DIR`
        case commandLine = "command line"
        /// `CONTEXT_HOST_MANIFESTS`
        case environment = "CONTEXT_HOST_MANIFESTS"
        /// `./manifests`
        case defaultPath = "default"
        /// An installed provider's version folder, named by the lock file (docs/packages.md).
        case installed = "installed"
    }

    /// Absolute, lexically normalised.
    package var path: String
    /// As the user wrote it; used to name files in diagnostics.
    package var displayPath: String
    package var source: Source

    /// Explicit folders that are missing are reported; the default one is not.
    package var isExplicit: Bool { source != .defaultPath }

    package init(path: String, displayPath: String, source: Source) {
        self.path = path
        self.displayPath = displayPath
        self.source = source
    }
}

/// Where manifests are looked for.
package enum ManifestSearchPaths {
    package static let environmentVariable = "CONTEXT_HOST_MANIFESTS"
    package static let defaultDirectory = "manifests"

    /// The folders to search, in order. The first source that names any folder wins:
    /// `--manifests DIR` (repeatable) replaces `CONTEXT_HOST_MANIFESTS` (colon-separated), which
    /// replaces the default `./manifests`. Relative folders resolve against `currentDirectory`;
    /// repeated folders are searched once.
    package static func resolve(
        cliDirectories: [String], environment: [String: String], currentDirectory: String
    ) -> [ManifestSearchPath] {
        var chosen: [(String, ManifestSearchPath.Source)]
        let fromEnvironment = (environment[environmentVariable] ?? "").split(separator: ":").map(String.init)
            .filter { !$0.isEmpty }
        if !cliDirectories.filter({ !$0.isEmpty }).isEmpty {
            chosen = cliDirectories.filter { !$0.isEmpty }.map { ($0, .commandLine) }
        } else if !fromEnvironment.isEmpty {
            chosen = fromEnvironment.map { ($0, .environment) }
        } else {
            chosen = [(defaultDirectory, .defaultPath)]
        }
        var seen: Set<String> = []
        var result: [ManifestSearchPath] = []
        for (display, source) in chosen {
            let absolute = ManifestFileSystem.absolute(display, base: currentDirectory)
            guard seen.insert(absolute).inserted else { continue }
            result.append(ManifestSearchPath(path: absolute, displayPath: display, source: source))
        }
        return result
    }
}

/// Every manifest found in the search folders: accepted ones and rejected ones with their reasons.
package struct ManifestCatalog: Sendable, Equatable {
    package enum Entry: Sendable, Equatable {
        case accepted(Manifest)
        case rejected(ManifestRejection)

        /// The manifest file as the user named it.
        package var path: String {
            switch self {
            case .accepted(let manifest): manifest.manifestPath
            case .rejected(let rejection): rejection.path
            }
        }

        /// The id, if it could be read.
        package var id: String? {
            switch self {
            case .accepted(let manifest): manifest.id
            case .rejected(let rejection): rejection.id
            }
        }
    }

    /// In discovery order: folder by folder, files sorted by name.
    package var entries: [Entry]
    /// Problems with the search folders themselves (an explicit folder that does not exist).
    package var diagnostics: [ManifestDiagnostic]

    package init(entries: [Entry], diagnostics: [ManifestDiagnostic]) {
        self.entries = entries
        self.diagnostics = diagnostics
    }

    /// The accepted manifests, in discovery order.
    package var manifests: [Manifest] {
        entries.compactMap { if case .accepted(let m) = $0 { m } else { nil } }
    }

    /// The rejected manifests, in discovery order.
    package var rejections: [ManifestRejection] {
        entries.compactMap { if case .rejected(let r) = $0 { r } else { nil } }
    }

    /// The accepted manifest with this id.
    package func manifest(id: String) -> Manifest? {
        manifests.first { $0.id == id }
    }

    /// Whether `first` sorts before `second` by the bytes of their UTF-8 (the same order on every
    /// machine, whatever its locale): `memcmp`, where comparing the two `utf8` views element by
    /// element took ~5% of a cached discovery of 1,000 manifests.
    static func precedesByBytes(_ first: String, _ second: String) -> Bool {
        var first = first, second = second
        return first.withUTF8 { a in
            second.withUTF8 { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                return order != 0 ? order < 0 : a.count < b.count
            }
        }
    }

    /// Whether a file name is a manifest: `*.yaml` or `*.yml`, not hidden.
    static func isManifestFileName(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".yaml") || name.hasSuffix(".yml"))
    }

    /// Reads every `*.yaml` / `*.yml` file (not recursive, sorted by name) of each folder in order.
    /// A bad manifest is rejected without affecting the others; a later manifest whose id an
    /// accepted one already uses is rejected with `duplicate-id`.
    package static func discover(_ searchPaths: [ManifestSearchPath]) -> ManifestCatalog {
        let found = findFiles(searchPaths)
        return catalog(found, outcomes: loadResults(found.files))
    }

    /// A manifest file found in a search folder.
    struct FoundFile {
        var absolutePath: String
        /// As the user named it.
        var file: String
        /// The absolute search folder.
        var directory: String
        var stamp: FileStamp
    }

    /// The manifest files of every folder, listed and stat'ed (folder by folder, each sorted by
    /// name), and the problems with the folders themselves.
    static func findFiles(_ searchPaths: [ManifestSearchPath]) -> (files: [FoundFile], diagnostics: [ManifestDiagnostic]) {
        var diagnostics: [ManifestDiagnostic] = []
        var files: [FoundFile] = []
        for searchPath in searchPaths {
            guard ManifestFileSystem.kind(of: searchPath.path) == .directory,
                let names = ManifestFileSystem.directoryEntries(searchPath.path)
            else {
                if searchPath.isExplicit {
                    let exists = ManifestFileSystem.kind(of: searchPath.path) != .missing
                    diagnostics.append(
                        ManifestDiagnostic(
                            file: searchPath.displayPath, line: 0, column: 0, fieldPath: "", code: .directoryNotFound,
                            message: exists
                                ? "the manifests folder '\(searchPath.path)' is not a readable folder"
                                : "the manifests folder '\(searchPath.path)' does not exist",
                            hint: "check the path given by \(searchPath.source == .commandLine ? "--manifests (HostConfiguration.manifestDirectories)" : ManifestSearchPaths.environmentVariable)"
                        ))
                }
                continue
            }
            let display = searchPath.displayPath.hasSuffix("/") ? searchPath.displayPath : searchPath.displayPath + "/"
            let folderFD = open(searchPath.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if folderFD >= 0 { close(folderFD) } }
            for name in names.filter(isManifestFileName).sorted(by: precedesByBytes) {
                let absolute = searchPath.path == "/" ? "/" + name : searchPath.path + "/" + name
                let found = folderFD >= 0 ? FileStamp.of(name, relativeTo: folderFD) : FileStamp.of(absolute)
                guard let (stamp, isRegularFile) = found, isRegularFile else { continue }
                files.append(FoundFile(absolutePath: absolute, file: display + name, directory: searchPath.path, stamp: stamp))
            }
        }
        return (files, diagnostics)
    }

    /// The file `name` of each folder, stat'ed without listing the folder (installed providers:
    /// one `manifest.yaml` per version folder); missing ones are left out.
    static func findFiles(named name: String, in searchPaths: [ManifestSearchPath]) -> (files: [FoundFile], diagnostics: [ManifestDiagnostic]) {
        var files: [FoundFile] = []
        files.reserveCapacity(searchPaths.count)
        for searchPath in searchPaths {
            let absolute = searchPath.path + "/" + name
            guard let (stamp, isRegularFile) = FileStamp.of(absolute), isRegularFile else { continue }
            files.append(FoundFile(absolutePath: absolute, file: searchPath.displayPath + "/" + name, directory: searchPath.path, stamp: stamp))
        }
        return (files, [])
    }

    /// The catalog of the files `findFiles` found, given the outcome of parsing (or looking up)
    /// each one, in order. Duplicate ids are rejected here, after the outcomes, so a cached result
    /// never hides one.
    static func catalog(
        _ found: (files: [FoundFile], diagnostics: [ManifestDiagnostic]),
        outcomes: consuming [Result<Manifest, ManifestRejection>]
    ) -> ManifestCatalog {
        let files = found.files
        precondition(outcomes.count == files.count, "one outcome per manifest file")
        var entries: [Entry] = []
        entries.reserveCapacity(files.count)
        var firstFileForID: [String: String] = [:]
        firstFileForID.reserveCapacity(files.count)
        for (index, file) in files.enumerated() {
            switch outcomes[index].moveOut() {
            case .success(let manifest):
                if let first = firstFileForID[manifest.id] {
                    entries.append(
                        .rejected(
                            ManifestRejection(
                                path: file.file, id: manifest.id,
                                diagnostics: [
                                    manifest.diagnostic(
                                        .duplicateId, at: "id",
                                        message: "the id '\(manifest.id)' is already used by \(first)",
                                        hint: "give this provider its own id, or remove one of the two manifests "
                                            + "(the first one found wins)")
                                ])))
                } else {
                    firstFileForID[manifest.id] = file.file
                    entries.append(.accepted(manifest))
                }
            case .failure(let rejection):
                entries.append(.rejected(rejection))
            }
        }
        return ManifestCatalog(entries: entries, diagnostics: found.diagnostics)
    }

    /// `discover` over these folders, in order (relative ones against the current directory). A
    /// missing folder is reported only if `explicit` (the default `./manifests` passes `false`).
    package static func discover(directories: [String], explicit: Bool = true) -> ManifestCatalog {
        let cwd = ManifestFileSystem.currentDirectory()
        var seen: Set<String> = []
        var paths: [ManifestSearchPath] = []
        for directory in directories where !directory.isEmpty {
            let absolute = ManifestFileSystem.absolute(directory, base: cwd)
            guard seen.insert(absolute).inserted else { continue }
            paths.append(
                ManifestSearchPath(
                    path: absolute, displayPath: directory, source: explicit ? .commandLine : .defaultPath))
        }
        return discover(paths)
    }

    /// Same as `diagnostics`.
    package var problems: [ManifestDiagnostic] { diagnostics }

    /// `loadResult` of each file, in order: side by side on every core when there are enough
    /// files to be worth it (reading, parsing and checking one manifest is ~0.7M instructions:
    /// 1,000 took 70–130 ms on one core of this machine; start-up with a handful stays on one
    /// thread).
    static func loadResults(
        _ files: [FoundFile], cores: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    ) -> [Result<Manifest, ManifestRejection>] {
        guard files.count >= parallelLoadMinimum, cores > 1 else { return files.map(loadResult) }
        // Several chunks a core, so a core that starts late or is taken away does not leave the
        // others waiting at the end.
        let chunks = min(files.count, 4 * cores)
        return Array(unsafeUninitializedCapacity: files.count) { buffer, initialized in
            nonisolated(unsafe) let target = buffer  // each index is written by exactly one chunk
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let range = (files.count * chunk / chunks)..<(files.count * (chunk + 1) / chunks)
                for index in range { (target.baseAddress! + index).initialize(to: loadResult(files[index])) }
            }
            initialized = files.count
        }
    }

    /// Fewer manifest files than this are read on the calling thread.
    static let parallelLoadMinimum = 32

    /// Reads and validates one found file.
    static func loadResult(_ found: FoundFile) -> Result<Manifest, ManifestRejection> {
        switch ManifestFileSystem.readFile(found.absolutePath) {
        case .success(let bytes):
            do {
                return .success(try Manifest.parse(bytes: bytes, file: found.file, directory: found.directory))
            } catch {
                return .failure(error)
            }
        case .failure(let error):
            return .failure(
                ManifestRejection(
                    path: found.file, id: nil,
                    diagnostics: [
                        ManifestDiagnostic(
                            file: found.file, line: 0, column: 0, fieldPath: "", code: .unreadableFile,
                            message: "cannot read the manifest: \(error.message)",
                            hint: "check the file's permissions")
                    ]))
        }
    }
}

extension Result<Manifest, ManifestRejection> {
    /// Moves this outcome out, leaving an empty rejection in its place: a copy would retain each of
    /// the manifest's strings and arrays again (~0.5 ms for 1,000 cached manifests), and Swift
    /// cannot move a value out of an array element or a struct's field otherwise.
    mutating func moveOut() -> Self {
        var taken = Self.failure(ManifestRejection(path: "", id: nil, diagnostics: []))
        swap(&taken, &self)
        return taken
    }
}
