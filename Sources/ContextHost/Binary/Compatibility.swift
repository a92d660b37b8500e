#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ProviderBinary {
    /// Why this library cannot run in `host` (empty when it can): platformMismatch,
    /// swiftVersionMismatch, missingDependency (one per missing DT_NEEDED), glibcTooOld.
    /// `libraryPath` is where the library is (or will be) installed, for `$ORIGIN`.
    package func problems(on host: HostRuntime, libraryPath: String) -> [PackageError] {
        let name = libraryPath.split(separator: "/").last.map(String.init) ?? libraryPath
        guard let hostPlatform = host.platform, hostPlatform == platform else {
            let here = host.platform?.rawValue ?? "an unsupported platform"
            return [PackageError(
                .platformMismatch, "'\(name)' is built for \(platform.rawValue), and this machine is \(here).",
                fix: "Package a library built for \(here) (a bundle holds one library per platform).")]
        }
        var problems: [PackageError] = []
        if case .swiftDynamic(let version) = runtime, let error = swiftVersionProblem(version, host: host, name: name) {
            problems.append(error)
        }
        if platform == .linuxX86_64 || platform == .linuxAarch64 {
            let search = LibrarySearch(libraryPath: libraryPath, runPaths: runPaths, host: host, platform: platform)
            var checked = Set<String>()
            for library in neededLibraries where checked.count < LibrarySearch.maxLibraries && checked.insert(library).inserted && !search.isFound(library) {
                problems.append(PackageError(
                    .missingDependency,
                    "'\(name)' needs the shared library '\(library)', which is not in its RUNPATH, LD_LIBRARY_PATH, /etc/ld.so.conf or the system folders.",
                    fix: "Install the package that provides '\(library)', or ship it beside the provider and link with `-Wl,-rpath,'$ORIGIN'`; for Swift, build with `-Xswiftc -static-stdlib`."))
            }
            if let required = requiredGlibc, let have = host.glibcVersion, DottedVersion.compare(required, have) == .orderedDescending {
                problems.append(PackageError(
                    .glibcTooOld, "'\(name)' needs GLIBC_\(required), and this machine has glibc \(have).",
                    fix: "Build the provider on a system with glibc \(have) or older (or against an older sysroot), or upgrade this machine."))
            }
        }
        return problems
    }

    /// The swiftVersionMismatch for a `swift-dynamic` library of `version`, or `nil` when it
    /// matches the host's runtime (by version, or by toolchain when the library records none).
    private func swiftVersionProblem(_ version: String, host: HostRuntime, name: String) -> PackageError? {
        let hostText = host.swiftVersion.map { "Swift \($0)" } ?? "a Swift runtime of unknown version"
        let fix = "Rebuild the provider with `-Xswiftc -static-stdlib` (preferred: it then carries its own runtime), or with \(host.swiftVersion.map { "Swift \($0)" } ?? "this host's Swift toolchain")."
        if version != Self.unknownSwiftVersion, let hostVersion = host.swiftVersion {
            guard DottedVersion.compare(version, hostVersion) != .orderedSame else { return nil }
            return PackageError(.swiftVersionMismatch, "'\(name)' is built with Swift \(version), and this host runs \(hostText).", fix: fix)
        }
        // No version on one side: the toolchain identity decides.
        if let library = swiftToolchain, let runtime = host.swiftToolchain, library == runtime { return nil }
        let what = version == Self.unknownSwiftVersion
            ? "records no Swift version (no debug information)" : "is built with Swift \(version)"
        let toolchains = "toolchain llvm-project \(swiftToolchain.map { String($0.prefix(12)) } ?? "unknown") vs the host runtime's \(host.swiftToolchain.map { String($0.prefix(12)) } ?? "unknown")"
        return PackageError(.swiftVersionMismatch, "'\(name)' \(what) and its toolchain cannot be matched to this host's runtime (\(hostText); \(toolchains)).", fix: fix)
    }

    /// The runtimeMismatch when a manifest's declared `runtime` differs from the detected one
    /// (a `swift-dynamic` library that records no version matches any declared version).
    package func runtimeProblem(declared: ProviderRuntime, name: String) -> PackageError? {
        switch (declared, runtime) {
        case (.native, .native), (.swiftStatic, .swiftStatic): return nil
        case (.swiftDynamic(let said), .swiftDynamic(let found)):
            if found == Self.unknownSwiftVersion || DottedVersion.compare(said, found) == .orderedSame { return nil }
        default: break
        }
        return PackageError(
            .runtimeMismatch, "The manifest declares runtime \(Self.describe(declared)), and '\(name)' is \(Self.describe(runtime)).",
            fix: "Let `context-host package` fill in `runtime`, or correct it to \(Self.describe(runtime)).")
    }

    /// "swift-dynamic (Swift 6.3.1)", "native", …
    static func describe(_ runtime: ProviderRuntime) -> String {
        if case .swiftDynamic(let version) = runtime { return "swift-dynamic (Swift \(version))" }
        return runtime.kind
    }
}

/// Where the dynamic loader would look for a DT_NEEDED name, approximated with bounded work:
/// the library's RUNPATH/RPATH (`$ORIGIN` expanded), LD_LIBRARY_PATH, /etc/ld.so.conf (with its
/// includes), the default and multiarch folders, and the host's own Swift runtime folder (those
/// libraries are loaded in the host already, so the loader reuses them by soname).
struct LibrarySearch {
    /// The folders, in search order, without duplicates.
    let folders: [String]

    /// The most folders searched, distinct DT_NEEDED names checked, and ld.so.conf files read
    /// (at most 256 × 256 `stat` calls for a hostile library).
    static let maxFolders = 256
    /// See `maxFolders`.
    static let maxLibraries = 256
    /// See `maxFolders`.
    static let maxConfigFiles = 64

    /// The folders for a library installed at `libraryPath` with these RUNPATH/RPATH entries.
    init(libraryPath: String, runPaths: [String], host: HostRuntime, platform: PlatformID) {
        let origin = HostRuntime.directory(of: libraryPath)
        var folders: [String] = []
        for path in runPaths.prefix(Self.maxFolders) {
            let expanded = path.replacingAll("${ORIGIN}", with: origin).replacingAll("$ORIGIN", with: origin)
            if !expanded.contains("$") { folders.append(expanded) }  // $LIB, $PLATFORM: not expanded
        }
        if let value = getenv("LD_LIBRARY_PATH") {
            folders += String(cString: value).split(whereSeparator: { $0 == ":" || $0 == ";" }).map(String.init)
        }
        if let runtime = host.swiftRuntimeDirectory { folders.append(runtime) }
        var files = 0
        folders += Self.configFolders("/etc/ld.so.conf", depth: 0, files: &files)
        let multiarch = platform == .linuxAarch64 ? "aarch64-linux-gnu" : "x86_64-linux-gnu"
        folders += ["/lib/\(multiarch)", "/usr/lib/\(multiarch)", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]
        var seen = Set<String>()
        self.folders = Array(folders.filter { !$0.isEmpty && seen.insert($0).inserted }.prefix(Self.maxFolders))
    }

    /// Whether `library` resolves (names with a `/` are paths; the loader and vDSO always count).
    func isFound(_ library: String) -> Bool {
        if library.hasPrefix("linux-vdso") || library.hasPrefix("ld-linux") || library.hasPrefix("ld64.so") { return true }
        if library.contains("/") { return Self.isFile(library) }
        return folders.contains { Self.isFile($0 + "/" + library) }
    }

    /// Whether `path` names an existing file (following links).
    static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// The folders listed in an ld.so.conf file and its `include` globs, bounded in depth and files.
    static func configFolders(_ path: String, depth: Int, files: inout Int) -> [String] {
        guard depth < 4, files < maxConfigFiles, let text = readText(path, limit: 1 << 20) else { return [] }
        files += 1
        var folders: [String] = []
        for rawLine in text.split(whereSeparator: { $0 == "\n" }) {
            let line = String(rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimmed(of: " \t\r")
            if line.isEmpty || line.hasPrefix("hwcap ") { continue }
            if line.hasPrefix("include") {
                for pattern in line.dropFirst("include".count).split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                    let absolute = pattern.hasPrefix("/") ? String(pattern) : HostRuntime.directory(of: path) + "/" + pattern
                    for file in glob(absolute) where files < maxConfigFiles {
                        folders += configFolders(file, depth: depth + 1, files: &files)
                    }
                }
            } else {
                folders.append(line)
            }
            if folders.count >= maxFolders { break }
        }
        return folders
    }

    /// The paths matching `pattern`, sorted (at most `maxConfigFiles`).
    static func glob(_ pattern: String) -> [String] {
        var result = glob_t()
        defer { globfree(&result) }
        guard Glibc.glob(pattern, 0, nil, &result) == 0 else { return [] }
        var paths: [String] = []
        for index in 0..<min(Int(result.gl_pathc), maxConfigFiles) {
            if let path = result.gl_pathv[index] { paths.append(String(cString: path)) }
        }
        return paths.sorted()
    }

    /// A small text file, or `nil`.
    static func readText(_ path: String, limit: Int) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while bytes.count < limit {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes.prefix(limit), as: UTF8.self)
    }
}

/// String helpers without Foundation.
extension String {
    /// Without leading and trailing characters from `set`.
    fileprivate func trimmed(of set: String) -> String {
        let characters = Set(set)
        guard let first = firstIndex(where: { !characters.contains($0) }), let last = lastIndex(where: { !characters.contains($0) }) else { return "" }
        return String(self[first...last])
    }
}
