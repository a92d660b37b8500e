import ContextHost
/// Makes a `.ctxp` bundle from a provider's manifest and built library (`context-host package`,
/// docs/packages.md §6): the manifest rewritten with per-platform `libraries` and the detected
/// `runtime`, each platform's library under `lib/<platform>/`, licence and data files, the index
/// of every file's size and SHA-256, and the index's minisign signature.
package struct Packager {
    /// The provider's manifest file.
    package var manifestFile: String
    /// Resolves the manifest's `library` for this platform (its folder, `--library-path`, …).
    package var resolver: LibraryResolver
    /// Libraries for other platforms (`--library PLATFORM=PATH`).
    package var extraLibraries: [PlatformLibrary] = []
    /// Files or folders to add, relative to the manifest's folder (`--include`).
    package var includes: [String] = []
    /// The key that signs the index; nil makes an unsigned bundle (or uses `signature`).
    package var signingKey: MinisignSecretKey?
    /// A minisign signature of the index made elsewhere (`minisign -S -m ctxp-bundle.json`); the
    /// index is deterministic, so `--write-index` then `--signature` give the same index.
    package var signature: String?

    package init(manifestFile: String, resolver: LibraryResolver) {
        self.manifestFile = manifestFile
        self.resolver = resolver
    }

    /// Licence and notice files picked up from the manifest's folder without `--include`.
    static let licencePrefixes = ["LICENSE", "LICENCE", "COPYING", "NOTICE"]

    /// What `make` produced.
    package struct Output {
        package var bytes: [UInt8]
        package var index: BundleIndex
        package var runtime: ProviderRuntime
        package var platforms: [String]
        package var signer: String?
        /// The index's exact bytes (what a signature covers).
        package var indexBytes: [UInt8]
        /// With `signingKey`: the minisign signature of `bytes`, the whole bundle (its own embedded
        /// signature included), to write beside it as `NAME.ctxp.minisig` for `minisign -V`.
        package var bundleSignature: String?
    }

    /// Builds the bundle in memory.
    package func make() throws(PackageError) -> Output {
        let manifest: Manifest
        do {
            manifest = try Manifest.load(file: manifestFile)
        } catch {
            throw PackageError(
                .manifestInvalid, "the manifest \(manifestFile) is not valid:\n" + error.diagnostics.map { "    \($0)" }.joined(separator: "\n"),
                fix: "fix it (`context-host validate \(manifestFile)` checks it), then package again")
        }
        // Every platform's library: the manifest's own, then --library ones.
        var slots: [(platform: String, file: String)] = []
        if manifest.libraries.isEmpty {
            let path: String
            do {
                path = try resolver.resolve(manifest)
            } catch {
                throw PackageError(.manifestInvalid, "\(error.message)", fix: "build the provider first (\(error.hint))")
            }
            let binary = try ProviderBinary.inspect(file: path)
            slots.append((binary.platform.rawValue, path))
        } else {
            for entry in manifest.libraries {
                slots.append((entry.platform, ManifestFileSystem.join(manifest.directory, entry.path)))
            }
        }
        for extra in extraLibraries {
            slots.removeAll { $0.platform == extra.platform }
            slots.append((extra.platform, extra.path))
        }
        var runtime: ProviderRuntime?
        var entries: [ArchiveEntry] = []
        var libraries: [PlatformLibrary] = []
        for slot in slots {
            let bytes = try Self.read(slot.file)
            var binary = try ProviderBinary.inspect(bytes: bytes, name: slot.file)
            binary.runtime = try Self.resolvedRuntime(binary, file: slot.file)
            guard binary.platform.rawValue == slot.platform else {
                throw PackageError(
                    .platformMismatch, "\(slot.file) is a library for \(binary.platform.rawValue), not \(slot.platform)",
                    fix: "give the library built for \(slot.platform): --library \(slot.platform)=PATH")
            }
            if let runtime, runtime != binary.runtime {
                throw PackageError(
                    .runtimeMismatch,
                    "the libraries carry different runtimes: \(runtime.text) and \(binary.runtime.text) (\(slot.file))",
                    fix: "build every platform's library the same way (for Swift: -Xswiftc -static-stdlib)")
            }
            runtime = binary.runtime
            let name = slot.file.split(separator: "/").last.map(String.init) ?? slot.file
            let path = BundleLayout.libraryPath(platform: slot.platform, fileName: name)
            libraries.append(PlatformLibrary(platform: slot.platform, path: path))
            entries.append(ArchiveEntry(path: path, bytes: bytes, executable: true))
        }
        guard let runtime else {
            throw PackageError(.manifestInvalid, "no library to package", fix: "build the provider first")
        }
        if let declared = manifest.runtime, declared != runtime {
            throw PackageError(
                .runtimeMismatch,
                "\(manifestFile) says runtime \(declared.text), but the library is \(runtime.text)",
                fix: "remove 'runtime' and 'swiftVersion' from the manifest: `package` fills them in")
        }

        // Licence files, then --include files and folders.
        var extra: [String] = []
        for name in (ManifestFileSystem.directoryEntries(manifest.directory) ?? []).sorted()
        where Self.licencePrefixes.contains(where: { name.uppercased().hasPrefix($0) })
            && ManifestFileSystem.kind(of: manifest.directory + "/" + name) == .file
        {
            extra.append(name)
        }
        for include in includes { extra += try Self.files(under: include, in: manifest.directory) }
        for path in extra where !entries.contains(where: { $0.path == path }) {
            guard path != BundleLayout.manifestFileName, path != BundleIndex.fileName, path != BundleIndex.signatureFileName else {
                throw PackageError(
                    .archiveUnsafePath, "--include \(path) would replace a file the bundle makes itself",
                    fix: "rename the file")
            }
            let file = manifest.directory + "/" + path
            entries.append(ArchiveEntry(path: path, bytes: try Self.read(file), executable: false))
            // Stop reading as soon as the bundle could not be installed anyway.
            let total = entries.reduce(0) { $0 &+ $1.bytes.count }
            guard total <= ArchiveLimits().expandedBytes, entries.count <= ArchiveLimits().entries else {
                throw PackageError(
                    .archiveTooLarge,
                    "the bundle would hold \(entries.count) files and \(total >> 20) MB or more by \(path); installs refuse over \(ArchiveLimits().entries) files or \(ArchiveLimits().expandedBytes >> 20) MB",
                    fix: "include only the data the provider needs, or let it download large data on first use")
            }
        }

        // The manifest, rewritten for the bundle and checked again.
        let original = try Self.read(manifestFile)
        let rewritten = Self.bundleManifest(String(decoding: original, as: UTF8.self), libraries: libraries, runtime: runtime)
        do {
            _ = try Manifest.parse(rewritten, file: "\(manifestFile) (as packaged)", directory: manifest.directory)
        } catch where error.diagnostics.allSatisfy({ $0.code == .noLibraryForPlatform }) {
            // A bundle for other platforms only (made on a build machine of another kind) is fine.
        } catch {
            throw PackageError(
                .manifestInvalid, "the packaged manifest is not valid:\n" + error.diagnostics.map { "    \($0)" }.joined(separator: "\n"),
                fix: "this is a bug in `context-host package` if the manifest itself validates; please report it")
        }
        entries.insert(ArchiveEntry(path: BundleLayout.manifestFileName, bytes: Array(rewritten.utf8)), at: 0)

        let index = BundleIndex.describing(id: manifest.id, version: manifest.version.description, entries: entries)
        let indexBytes = index.encoded()
        var archive = [ArchiveEntry(path: BundleIndex.fileName, bytes: indexBytes)]
        var signer = signingKey?.publicKey.keyIDString
        if let signingKey {
            let signature = MinisignSignature.sign(
                indexBytes, with: signingKey,
                trustedComment: "\(manifest.id) \(manifest.version) index sha256 \(SHA256.hex(of: indexBytes))",
                untrustedComment: "signature of \(manifest.id) \(manifest.version) by context-host package")
            archive.append(ArchiveEntry(path: BundleIndex.signatureFileName, bytes: Array(signature.utf8)))
        } else if let signature {
            // Checked for form here; whether it verifies is the installer's business (it has the keys).
            let parsed = try MinisignSignature(parsing: signature)
            archive.append(ArchiveEntry(path: BundleIndex.signatureFileName, bytes: Array(signature.utf8)))
            signer = parsed.keyIDString
        }
        archive += entries
        var bytes = try BundleArchive.write(archive)
        var bundleSignature: String?
        if let signingKey {
            // The gzip member signed inside its own header (`EmbeddedSignature`), so the file is
            // checked before it is decompressed even when it travels alone; then the whole file
            // signed again for `NAME.ctxp.minisig` (what `minisign -V` checks).
            let embedded = MinisignSignature.sign(
                bytes, with: signingKey, trustedComment: "\(manifest.id) \(manifest.version) gzip member sha256 \(SHA256.hex(of: bytes))",
                untrustedComment: "signature of the bundle \(manifest.id) \(manifest.version) by context-host package")
            guard let signed = EmbeddedSignature.embed(embedded, in: bytes) else {
                throw PackageError(
                    .archiveCorrupt, "the archive's gzip header cannot hold its signature",
                    fix: "this is a bug in `context-host package`; please report it")
            }
            bytes = signed
            bundleSignature = MinisignSignature.sign(
                bytes, with: signingKey, trustedComment: "\(manifest.id) \(manifest.version) bundle sha256 \(SHA256.hex(of: bytes))",
                untrustedComment: "signature of the bundle \(manifest.id) \(manifest.version) by context-host package")
        }
        return Output(
            bytes: bytes, index: index, runtime: runtime, platforms: libraries.map(\.platform), signer: signer,
            indexBytes: indexBytes, bundleSignature: bundleSignature)
    }

    /// The runtime to record: a `swift-dynamic` library that records no Swift version (a release
    /// build without debug information) gets this host's version when the same toolchain linked
    /// both; otherwise nobody could later tell which runtime it needs, so it is refused.
    static func resolvedRuntime(_ binary: ProviderBinary, file: String) throws(PackageError) -> ProviderRuntime {
        guard case .swiftDynamic(let version) = binary.runtime, version == ProviderBinary.unknownSwiftVersion else {
            return binary.runtime
        }
        let host = HostRuntime.current
        if let toolchain = binary.swiftToolchain, toolchain == host.swiftToolchain, let hostVersion = host.swiftVersion {
            return .swiftDynamic(swiftVersion: hostVersion)
        }
        throw PackageError(
            .runtimeMismatch,
            "\(file) links the shared Swift runtime but records no Swift version (no debug information), and was not built by this context-host's toolchain",
            fix: "build it with -Xswiftc -static-stdlib (recommended: it then runs in any host), or package it with the context-host of the toolchain that built it")
    }

    static func read(_ path: String) throws(PackageError) -> [UInt8] {
        do {
            return try FileBytes.read(path)
        } catch {
            throw PackageError(.storeIO, "cannot read \(path): \(error.reason)", fix: "check the path and its permissions")
        }
    }

    /// The regular files of `include` (a file or a folder, relative to `base`), as relative paths.
    static func files(under include: String, in base: String, depth: Int = 0) throws(PackageError) -> [String] {
        let relative = ManifestFileSystem.normalize(include)
        guard !include.hasPrefix("/"), !relative.hasPrefix(".."), !relative.isEmpty, relative != "." else {
            throw PackageError(
                .archiveUnsafePath, "--include \(include) is not inside the manifest's folder \(base)",
                fix: "give paths relative to the manifest's folder, inside it")
        }
        let path = base + "/" + relative
        if ManifestFileSystem.isSymlink(path) {
            throw PackageError(.archiveLink, "--include \(include) is a symbolic link; bundles hold no links", fix: "copy the file instead")
        }
        switch ManifestFileSystem.kind(of: path) {
        case .file: return [relative]
        case .directory:
            guard depth < 8 else {
                throw PackageError(.archiveUnsafePath, "--include \(include) is nested too deep", fix: "flatten the folder")
            }
            var result: [String] = []
            for name in (ManifestFileSystem.directoryEntries(path) ?? []).sorted() where !name.hasPrefix(".") {
                result += try files(under: relative + "/" + name, in: base, depth: depth + 1)
            }
            return result
        default:
            throw PackageError(.storeIO, "--include \(include): no such file or folder in \(base)", fix: "check the path")
        }
    }

    /// Top-level keys `package` writes itself; the author's values are dropped.
    static let generatedKeys = ["library", "libraries", "sha256", "runtime", "swiftVersion"]

    /// `text` without its top-level `library`, `libraries`, `sha256`, `runtime` and
    /// `swiftVersion` (and their indented continuation lines), plus the generated ones.
    package static func bundleManifest(_ text: String, libraries: [PlatformLibrary], runtime: ProviderRuntime) -> String {
        var lines: [Substring] = []
        var skipping = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let startsBlock = !(line.first == " " || line.first == "\t" || line.isEmpty)
            if startsBlock {
                skipping = generatedKeys.contains { key in
                    line.hasPrefix(key) && line.dropFirst(key.count).drop(while: { $0 == " " }).first == ":"
                }
            }
            if !skipping { lines.append(line) }
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        var result = lines.joined(separator: "\n") + "\n"
        result += "# Written by `context-host package`:\nlibraries:\n"
        for library in libraries { result += "  \(library.platform): \(library.path)\n" }
        switch runtime {
        case .native: result += "runtime: native\n"
        case .swiftStatic: result += "runtime: swift-static\n"
        case .swiftDynamic(let version): result += "runtime: swift-dynamic\nswiftVersion: \"\(version)\"\n"
        }
        return result
    }
}
