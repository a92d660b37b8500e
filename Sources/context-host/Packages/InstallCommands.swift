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

/// The steps every install and upgrade share, inside one store transaction: verify with the keys
/// read under the store lock, stage, check the library on this machine, probe it in a throwaway
/// sandboxed worker (and run conformance when asked); the transaction then activates everything
/// at once, or nothing.
struct InstallSteps {
    var locations: PackageLocations
    var sandbox: IsolationConfiguration.SandboxPolicy
    var conformance: Bool

    /// The steps as the command's options ask (`--sandbox`, `--conformance`).
    init(locations: PackageLocations, store: StoreOptions, verify: VerifyOptions) {
        self.locations = locations
        sandbox = store.sandbox
        conformance = verify.conformance
    }

    /// Verifies, stages and checks each file in order in `transaction`; the first failure undoes all.
    func run(
        _ files: [String], verify: VerifyOptions, operation: PackageStore.Operation, in transaction: inout PackageStore.Transaction
    ) throws(PackageError) -> [PackageStore.Staged] {
        var verifier = try verify.verifier(trustedKeys: transaction.trustedKeys)
        var done: [PackageStore.Staged] = []
        for file in files {
            let bundle = try verifier.open(file, into: &transaction, locations: locations)
            let staged = try transaction.stage(bundle, operation: operation, acceptNewKey: verify.acceptNewKey)
            try check(staged)
            done.append(staged)
        }
        return done
    }

    /// This machine can run it, it loads, it is what it says, and (optionally) it conforms.
    func check(_ staged: PackageStore.Staged) throws(PackageError) {
        let bundle = staged.bundle
        let platform = PlatformID.current?.rawValue ?? "unknown"
        guard let library = bundle.hostLibrary else {
            throw PackageError(
                .platformUnsupported, "\(bundle.index.id) \(bundle.index.version) has no library for this machine (\(platform))",
                fix: "ask the author for a bundle with a \(platform) library")
        }
        let libraryPath = staged.folder + "/" + library.path
        if let problem = library.binary.problems(on: HostRuntime.current, libraryPath: libraryPath).first { throw problem }
        var configuration = HostConfiguration(executableDirectory: HostOptions.executableDirectory())
        configuration.isolation.sandbox = sandbox
        var manifest = bundle.manifest
        manifest.sha256 = library.sha256
        let logger = Logger(label: "context-host.install")
        try InstallProbe.run(manifest: manifest, libraryPath: libraryPath, configuration: configuration, logger: logger)
        if conformance {
            var options = ConformanceOptions()
            options.modes = [.worker]
            options.sandbox = sandbox
            let report = ContextConformance.Conformance.runBlocking([staged.folder + "/" + BundleLayout.manifestFileName], options: options)
            if !report.passed {
                let text = ConformanceFormatter.render(report, format: .text, colour: false)
                throw PackageError(
                    .conformanceFailed, "\(bundle.index.id) \(bundle.index.version) failed conformance; nothing was installed:\n\(text)",
                    fix: "tell the provider's author; install without --conformance only if you accept the failures")
            }
        }
    }
}

extension BundleVerifier {
    /// Opens and verifies `file`; a key it accepted (`--trust-key`) is saved in `transaction` and
    /// trusted for the files after it.
    mutating func open(
        _ file: String, into transaction: inout PackageStore.Transaction, locations: PackageLocations
    ) throws(PackageError) -> VerifiedBundle {
        let bundle = try open(file: file, directory: locations.versionDirectory)
        if let keys = bundle.trustedKeysToSave {
            transaction.trustedKeys = keys
            trustedKeys = keys
        }
        return bundle
    }
}

extension ContextHostCommand {
    /// `install FILE…`
    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install provider bundles (.ctxp): verify, unpack, probe in a sandboxed worker, activate.",
            discussion: """
                Each bundle's signature must come from a trusted key scoped to its id (or --trust-key), every file must \
                match the signed index, and the library must run on this machine. It is unpacked into a read-only \
                folder under $XDG_DATA_HOME/context-host/packages, loaded once in a throwaway sandboxed worker, and \
                only then recorded in the lock file ($XDG_CONFIG_HOME/context-host/providers.lock). A running host \
                picks it up. Several bundles are one transaction: all are installed, or none. With --locked LOCKFILE, \
                installs exactly what that lock file lists from the given bundles, or nothing; the lock file only \
                narrows what is accepted, it trusts no key. See docs/packages.md.
                """)

        @Argument(help: ArgumentHelp("Bundle files, or folders of them (with --locked).", valueName: "file"))
        var files: [String]

        @OptionGroup var verify: VerifyOptions
        @OptionGroup var store: StoreOptions

        @Flag(help: "Reinstall or replace a provider that is installed already (every file is unpacked again, repairing a damaged copy).")
        var force = false

        @Flag(help: "Allow --force or --locked to install an older version than the installed one.")
        var allowDowngrade = false

        @Option(help: ArgumentHelp("Reproduce this lock file exactly from the given bundles, or fail.", valueName: "lockfile"))
        var locked: String?

        func run() throws {
            let locations = try store.locations()
            let steps = InstallSteps(locations: locations, store: store, verify: verify)
            do throws(PackageError) {
                let packageStore = PackageStore(locations: locations)
                if let locked {
                    let (installed, count) = try packageStore.transaction(waiting: waitingForStore) {
                        (transaction) throws(PackageError) -> ([VerifiedBundle], Int) in
                        try installLocked(locked, locations: locations, steps: steps, in: &transaction)
                    }
                    for bundle in installed {
                        report("Installed", bundle: bundle, folder: locations.versionDirectory(id: bundle.index.id, version: bundle.index.version), replacing: nil)
                    }
                    print("The installation matches \(locked): \(count) provider(s).")
                    return
                }
                let staged = try packageStore.transaction(waiting: waitingForStore) { (transaction) throws(PackageError) in
                    try steps.run(files, verify: verify, operation: .install(force: force, allowDowngrade: allowDowngrade), in: &transaction)
                }
                for each in staged { report("Installed", each) }
            } catch {
                throw fail(error)
            }
        }

        /// `install --locked`: every bundle verified with the user's own trust (trusted keys,
        /// --trust-key, --allow-unsigned) and matched against the lock, every current version
        /// present, before anything is unpacked; then all staged and probed, and the lock written
        /// once. The lock narrows what is accepted (exact index hash and signer) but trusts nothing.
        private func installLocked(
            _ lockPath: String, locations: PackageLocations, steps: InstallSteps, in transaction: inout PackageStore.Transaction
        ) throws(PackageError) -> ([VerifiedBundle], Int) {
            let wanted = try LockFile.load(file: lockPath)
            var bundles: [String] = []
            for file in files {
                if ManifestFileSystem.kind(of: file) == .directory {
                    bundles += directoryNames(file).filter { $0.hasSuffix("." + BundleLayout.fileExtension) }.map { file + "/" + $0 }
                } else {
                    bundles.append(file)
                }
            }
            var verifier = try verify.verifier(trustedKeys: transaction.trustedKeys)
            var opened: [VerifiedBundle] = []
            for file in bundles {
                let bundle = try verifier.open(file, into: &transaction, locations: locations)
                let (id, version) = (bundle.index.id, bundle.index.version)
                guard let entry = wanted.entry(id: id),
                    let record = [entry.current, entry.previous].compactMap({ $0 }).first(where: { $0.version == version })
                else {
                    throw PackageError(
                        .lockMismatch, "\(file) is \(id) \(version), which \(lockPath) does not list; nothing was installed",
                        fix: "pass only the bundles the lock file names")
                }
                guard bundle.indexSHA256 == record.indexSHA256, bundle.signer?.keyIDString == record.signer else {
                    throw PackageError(
                        .lockMismatch,
                        "\(file) (\(id) \(version)) differs from \(lockPath): index SHA-256 \(bundle.indexSHA256) (lock: \(record.indexSHA256)), signer \(bundle.signer?.keyIDString ?? "none") (lock: \(record.signer ?? "none")); nothing was installed",
                        fix: "use the exact bundle the lock was made with; if it was rebuilt on purpose, install it normally and commit the new lock")
                }
                opened.append(bundle)
            }
            // Every current version given, and no downgrade unless asked, before anything is unpacked.
            for entry in wanted.providers {
                guard opened.contains(where: { $0.index.id == entry.id && $0.index.version == entry.current.version }) else {
                    throw PackageError(
                        .lockMismatch, "\(lockPath) lists \(entry.id) \(entry.current.version), but no bundle given is that version; nothing was installed",
                        fix: "add \(BundleLayout.fileName(id: entry.id, version: entry.current.version)) to the command")
                }
                if let installed = transaction.lock.entry(id: entry.id), let old = Version(installed.current.version),
                    let new = Version(entry.current.version), new < old, !allowDowngrade
                {
                    throw PackageError(
                        .notNewer, "\(lockPath) lists \(entry.id) \(entry.current.version), older than the installed \(installed.current.version); nothing was installed",
                        fix: "to go back on purpose, add --allow-downgrade")
                }
            }
            for entry in wanted.providers {
                for record in [entry.previous, entry.current].compactMap({ $0 }) {
                    guard let bundle = opened.first(where: { $0.index.id == entry.id && $0.index.version == record.version }) else {
                        writeStandardError("note: \(entry.id)'s previous version \(record.version) was not given; it cannot be rolled back to here.")
                        continue
                    }
                    try steps.check(try transaction.unpack(bundle))
                }
            }
            // The lock now says exactly what the given one says (previous versions given or already in the store).
            var result = LockFile()
            for entry in wanted.providers {
                var copy = entry
                if let previous = entry.previous,
                    ManifestFileSystem.kind(of: locations.versionDirectory(id: entry.id, version: previous.version)) != .directory
                {
                    copy.previous = nil
                }
                result.set(copy)
            }
            transaction.lock = result
            return (opened, wanted.providers.count)
        }
    }

    /// `upgrade FILE`
    struct Upgrade: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upgrade an installed provider from a newer bundle (the old version stays for rollback).")

        @Argument(help: ArgumentHelp("The bundle file.", valueName: "file"))
        var file: String

        @OptionGroup var verify: VerifyOptions
        @OptionGroup var store: StoreOptions

        @Flag(help: "Allow a version that is not newer than the installed one.")
        var allowDowngrade = false

        func run() throws {
            let locations = try store.locations()
            let steps = InstallSteps(locations: locations, store: store, verify: verify)
            let staged = try store.transaction(in: locations) { (transaction) throws(PackageError) in
                try steps.run([file], verify: verify, operation: .upgrade(allowDowngrade: allowDowngrade), in: &transaction)
            }
            for each in staged { report("Upgraded", each) }
        }
    }

    /// `rollback ID`
    struct Rollback: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make an installed provider's previous version active again.")

        @Argument(help: ArgumentHelp("The provider id.", valueName: "id"))
        var id: String

        @OptionGroup var store: StoreOptions

        func run() throws {
            let entry = try store.transaction(in: try store.locations()) { (transaction) throws(PackageError) in
                try transaction.rollback(id: id)
            }
            print("Rolled back \(id) to \(entry.current.version) (from \(entry.previous?.version ?? "?")).")
        }
    }

    /// `uninstall ID`
    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an installed provider from the lock file (its files go with `context-host gc`).")

        @Argument(help: ArgumentHelp("The provider id.", valueName: "id"))
        var id: String

        @OptionGroup var store: StoreOptions

        func run() throws {
            let locations = try store.locations()
            let entry = try store.transaction(in: locations) { (transaction) throws(PackageError) in
                try transaction.uninstall(id: id)
            }
            print("Uninstalled \(id) \(entry.current.version). Its files stay in \(locations.providerDirectory(id: id)) until `context-host gc`.")
        }
    }

    /// `gc`
    struct GarbageCollect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Delete installed versions the lock file no longer names (current and previous versions stay).")

        @OptionGroup var store: StoreOptions

        func run() throws {
            let locations = try store.locations()
            let packageStore = PackageStore(locations: locations)
            do throws(PackageError) {
                let result = try packageStore.exclusively(waiting: waitingForStore) { () throws(PackageError) in try packageStore.collectGarbage() }
                for path in result.removed { print("removed \(path)") }
                print("Freed \(result.bytes) bytes (\(result.removed.count) folder(s)).")
            } catch {
                throw fail(error)
            }
        }
    }
}

/// One line per installed or upgraded provider (printed once the transaction committed).
private func report(_ verb: String, _ staged: PackageStore.Staged) {
    report(verb, bundle: staged.bundle, folder: staged.folder, replacing: staged.replacing)
}

private func report(_ verb: String, bundle: VerifiedBundle, folder: String, replacing: LockFile.Installed?) {
    let signer = bundle.signer.map { "signed by \($0.keyIDString)" } ?? "unsigned"
    let from = replacing.map { " (was \($0.version))" } ?? ""
    print("\(verb) \(bundle.index.id) \(bundle.index.version)\(from): \(bundle.runtimeText), \(signer), probed in a sandboxed worker → \(folder)")
    if let key = bundle.signer, let trusted = bundle.trustedKeysToSave?.key(id: key.keyIDString) {
        let until = trusted.expires.map { " until \($0)" } ?? ""
        print("Now trusting key \(key.keyIDString) for \(trusted.scopes.joined(separator: ", "))\(until) (`context-host keys` lists and removes keys).")
    }
}
