import ArgumentParser
import ContextConformance
import ContextHost
import ContextPackages
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Options of the commands that change what is installed.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The worker sandbox of the install probe: required, best-effort (default) or off.", valueName: "policy"))
    var sandbox: IsolationConfiguration.SandboxPolicy = .bestEffort

    /// The standard folders (XDG), or a clear exit when there are none.
    func locations() throws -> PackageLocations {
        guard let locations = PackageLocations.standard() else {
            writeStandardError("error: no HOME and no XDG_CONFIG_HOME / XDG_DATA_HOME: nowhere to install providers.\n  fix: set HOME (or both XDG variables).")
            throw ExitCode(2)
        }
        return locations
    }

    /// Runs `change` as one transaction of the store at `locations` (waiting, with a note, for
    /// another command that holds it); a package error is printed and exits 1.
    func transaction<T>(in locations: PackageLocations, _ change: (inout PackageStore.Transaction) throws(PackageError) -> T) throws -> T {
        do throws(PackageError) {
            return try PackageStore(locations: locations).transaction(waiting: waitingForStore, change)
        } catch {
            throw fail(error)
        }
    }
}

/// Options for checking a bundle before it is installed.
struct VerifyOptions: ParsableArguments {
    @Flag(help: "Install a bundle that has no signature (only when you trust where it came from).")
    var allowUnsigned = false

    @Option(help: ArgumentHelp(
        "Trust this signing key (the author's public key: the `RW…` line or the .pub file) for this install and later ones.",
        valueName: "key"))
    var trustKey: String?

    @Option(name: .customLong("key-scope"), help: ArgumentHelp(
        "The provider ids a key accepted with --trust-key may sign (repeatable), e.g. 'com.example.*'. Default: the bundle's exact id.",
        valueName: "pattern"))
    var keyScopes: [String] = []

    @Option(name: .customLong("key-expires"), help: ArgumentHelp(
        "The last day (UTC, YYYY-MM-DD) a key accepted with --trust-key may be used. Default: no end.", valueName: "date"))
    var keyExpires: String?

    @Flag(help: "Run the full conformance suite on the provider (in a worker) before activating it.")
    var conformance = false

    @Flag(help: "Accept a bundle signed by another key than the installed version.")
    var acceptNewKey = false

    /// A verifier with the user's keys (as read under the store lock) and these options.
    func verifier(trustedKeys: TrustedKeys) throws(PackageError) -> BundleVerifier {
        var verifier = BundleVerifier(trustedKeys: trustedKeys)
        verifier.allowUnsigned = allowUnsigned
        if let trustKey { verifier.keyToTrust = try MinisignPublicKey(argument: trustKey) }
        if !keyScopes.isEmpty { verifier.scopesForNewKey = keyScopes }
        verifier.expiryForNewKey = keyExpires
        return verifier
    }
}

extension MinisignPublicKey {
    /// A key given on the command line (`--trust-key`, `keys trust`): the `RW…` line itself, or
    /// the path of a file (`.pub`) that holds it.
    init(argument: String) throws(PackageError) {
        let isFile = ManifestFileSystem.kind(of: argument) == .file
        let text = isFile ? ((try? FileBytes.read(argument)).map { String(decoding: $0, as: UTF8.self) } ?? argument) : argument
        try self.init(parsing: text)
    }
}

/// Told once when a command waits for another that holds the store lock.
func waitingForStore() {
    writeStandardError("note: another context-host command is changing installed providers or trusted keys; waiting for it to finish…")
}

/// Prints a package error as `[code] message` and its fix, and exits 1.
func fail(_ error: PackageError) -> ExitCode {
    writeStandardError("error: \(error.description)")
    return ExitCode(1)
}

extension ContextHostCommand {
    /// `package DIR`: makes a signed `.ctxp` bundle.
    struct PackageProvider: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "package",
            abstract: "Make a provider bundle (NAME-VERSION.ctxp) from a manifest and its built library.",
            discussion: """
                PATH is a manifest file, or a folder with exactly one manifest. The bundle holds the manifest (with \
                per-platform 'libraries' and the detected 'runtime' filled in), the library of this platform and of \
                every --library, licence files next to the manifest, every --include, and an index of every file's \
                SHA-256, signed with --sign KEY (minisign format). See docs/packages.md.
                """)

        @Argument(help: ArgumentHelp("A manifest file, or the folder that holds it.", valueName: "path"))
        var path: String

        @Option(help: ArgumentHelp("Sign with this minisign secret key file (from `context-host keygen` or `minisign -G`).", valueName: "key"))
        var sign: String?

        @Option(name: .customLong("library"), help: ArgumentHelp(
            "The library for another platform, as PLATFORM=PATH (repeatable), e.g. linux-aarch64=build/aarch64/libWeatherProvider.so.",
            valueName: "platform=path"))
        var libraries: [String] = []

        @Option(name: .customLong("include"), help: ArgumentHelp(
            "A file or folder to add, relative to the manifest's folder (repeatable): data files the provider reads.", valueName: "path"))
        var includes: [String] = []

        @Option(name: .customLong("library-path"), help: ArgumentHelp(
            "A folder to search for the manifest's library after its own folder (repeatable).", valueName: "dir"))
        var libraryDirectories: [String] = []

        @Option(help: ArgumentHelp("The bundle file to write. Default: ./NAME-VERSION.ctxp.", valueName: "file"))
        var output: String?

        @Option(help: ArgumentHelp(
            "Write only the index (ctxp-bundle.json) to this file, to sign it with minisign (`minisign -S -m FILE`); then package again with --signature FILE.minisig.",
            valueName: "file"))
        var writeIndex: String?

        @Option(help: ArgumentHelp("A minisign signature of the index made with --write-index (instead of --sign).", valueName: "file"))
        var signature: String?

        func validate() throws {
            if sign != nil, signature != nil { throw ValidationError("Give --sign KEY or --signature FILE, not both.") }
        }

        func run() throws {
            let manifestFile: String
            if ManifestFileSystem.kind(of: path) == .directory {
                let names = directoryNames(path).filter { ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) && !$0.hasPrefix(".") }
                guard names.count == 1 else {
                    writeStandardError("error: \(path) holds \(names.count) manifests (\(names.joined(separator: ", "))); name the one to package.\n  fix: context-host package \(path)/NAME.yaml")
                    throw ExitCode(2)
                }
                manifestFile = path + "/" + names[0]
            } else {
                manifestFile = path
            }
            var packager = Packager(
                manifestFile: manifestFile,
                resolver: LibraryResolver(searchDirectories: libraryDirectories + [HostOptions.executableDirectory()].compactMap { $0 }))
            for assignment in libraries {
                guard let equals = assignment.firstIndex(of: "=") else {
                    writeStandardError("error: --library expects PLATFORM=PATH, got '\(assignment)'.")
                    throw ExitCode(2)
                }
                packager.extraLibraries.append(PlatformLibrary(
                    platform: String(assignment[..<equals]), path: String(assignment[assignment.index(after: equals)...])))
            }
            packager.includes = includes
            do throws(PackageError) {
                if let sign {
                    let text = String(decoding: try readFile(sign), as: UTF8.self)
                    let password = getenv("CONTEXT_HOST_KEY_PASSWORD").map { String(cString: $0) }
                    packager.signingKey = try MinisignSecretKey(parsing: text, password: password)
                }
                if let signature {
                    packager.signature = String(decoding: try readFile(signature), as: UTF8.self)
                }
                let made = try packager.make()
                if let writeIndex {
                    if let reason = AtomicFile.write(made.indexBytes, to: writeIndex, mode: 0o644) {
                        throw PackageError(.storeIO, "cannot write \(writeIndex): \(reason)", fix: "choose another path")
                    }
                    print("Wrote the index of \(made.index.id) \(made.index.version) to \(writeIndex).")
                    print("Sign it (minisign -S -m \(writeIndex)), then: context-host package \(path) --signature \(writeIndex).minisig")
                    print("and sign the bundle file too (minisign -S -m NAME.ctxp); ship NAME.ctxp.minisig beside it: installs read no unsigned file.")
                    return
                }
                let file = output ?? BundleLayout.fileName(id: made.index.id, version: made.index.version)
                if let reason = AtomicFile.write(made.bytes, to: file, mode: 0o644) {
                    throw PackageError(.storeIO, "cannot write \(file): \(reason)", fix: "choose another --output")
                }
                let detached = file + BundleLayout.signatureSuffix
                if let signature = made.bundleSignature {
                    if let reason = AtomicFile.write(Array(signature.utf8), to: detached, mode: 0o644) {
                        throw PackageError(.storeIO, "cannot write \(detached): \(reason)", fix: "choose another --output")
                    }
                } else if ManifestFileSystem.kind(of: detached) == .file, unlink(detached) == 0 {
                    print("Removed \(detached): it signed an earlier bundle of this name.")
                }
                print("Packaged \(made.index.id) \(made.index.version) → \(file)" + (made.bundleSignature == nil ? "" : " and \(detached)"))
                print("  \(made.bytes.count) bytes, \(made.index.files.count) files, platforms: \(made.platforms.joined(separator: ", ")), runtime: \(made.runtime.text)")
                print("  " + (made.signer.map { "signed by key \($0)" } ?? "unsigned (installs need --allow-unsigned; sign with --sign KEY)"))
                if made.signer != nil, made.bundleSignature == nil {
                    print("  only the index is signed: sign the file as well (minisign -S -m \(file)) and ship \(detached) beside it, or installs refuse it unread")
                }
                if case .swiftDynamic(let version) = made.runtime {
                    print("  note: a swift-dynamic library runs only in hosts built with Swift \(version); build with -Xswiftc -static-stdlib to run in any host.")
                }
            } catch {
                throw fail(error)
            }
        }

        private func readFile(_ path: String) throws(PackageError) -> [UInt8] {
            do { return try FileBytes.read(path) } catch {
                throw PackageError(.keyInvalid, "cannot read \(path): \(error.reason)", fix: "check the path")
            }
        }
    }

    /// `keygen`: a minisign key pair for signing bundles.
    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a signing key pair (minisign format): NAME.key (secret, 0600) and NAME.pub (publish this).")

        @Option(help: ArgumentHelp("The path prefix of the two files.", valueName: "name"))
        var output: String = "context-host-signing"

        @Flag(help: "Overwrite existing files.")
        var force = false

        func run() throws {
            let secretFile = output + ".key", publicFile = output + ".pub"
            if !force, ManifestFileSystem.kind(of: secretFile) != .missing || ManifestFileSystem.kind(of: publicFile) != .missing {
                writeStandardError("error: \(secretFile) or \(publicFile) exists; not overwriting a key.\n  fix: choose another --output, or add --force")
                throw ExitCode(1)
            }
            let key = MinisignSecretKey.generate()
            let id = key.publicKey.keyIDString
            if let reason = AtomicFile.write(Array(key.fileText(comment: "context-host secret key \(id)").utf8), to: secretFile, mode: 0o600)
                ?? AtomicFile.write(Array(key.publicKey.fileText(comment: "minisign public key \(id)").utf8), to: publicFile, mode: 0o644)
            {
                writeStandardError("error: cannot write the key files: \(reason)")
                throw ExitCode(1)
            }
            print("Key \(id):")
            print("  secret: \(secretFile) (unencrypted, 0600: keep it private; minisign can sign with it too)")
            print("  public: \(publicFile) — publish it; users install with --trust-key \(key.publicKey.base64)")
        }
    }
}

/// The names in a folder, sorted (empty if it cannot be read).
func directoryNames(_ path: String) -> [String] {
    (ManifestFileSystem.directoryEntries(path) ?? []).sorted()
}
