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

/// The steps every install and upgrade share: verify, stage, check the library on this machine,
/// probe it in a throwaway sandboxed worker (and run conformance when asked), then activate.
struct InstallSteps {
    var locations: PackageLocations
    var sandbox: IsolationConfiguration.SandboxPolicy
    var conformance: Bool

    func run(_ bundle: VerifiedBundle, operation: PackageStore.Operation, acceptNewKey: Bool) throws(PackageError) -> PackageStore.Staged {
        let store = PackageStore(locations: locations)
        return try store.exclusively { () throws(PackageError) -> PackageStore.Staged in
            let staged = try store.stage(bundle, operation: operation, acceptNewKey: acceptNewKey)
            do throws(PackageError) {
                try check(staged)
                try store.commit(staged)
            } catch {
                store.abandon(staged)
                throw error
            }
            return staged
        }
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
                picks it up. With --locked LOCKFILE, installs exactly what that lock file lists from the given bundles, \
                or fails. See docs/packages.md.
                """)

        @Argument(help: ArgumentHelp("Bundle files, or folders of them (with --locked).", valueName: "file"))
        var files: [String]

        @OptionGroup var verify: VerifyOptions
        @OptionGroup var store: StoreOptions

        @Flag(help: "Reinstall or replace a provider that is installed already.")
        var force = false

        @Option(help: ArgumentHelp("Reproduce this lock file exactly from the given bundles, or fail.", valueName: "lockfile"))
        var locked: String?

        @Flag(help: "Accept a bundle signed by another key than the installed version.")
        var acceptNewKey = false

        func run() throws {
            let locations = try store.locations()
            let steps = InstallSteps(
                locations: locations, sandbox: IsolationConfiguration.SandboxPolicy(rawValue: store.sandbox) ?? .bestEffort,
                conformance: verify.conformance)
            do throws(PackageError) {
                if let locked {
                    try installLocked(locked, locations: locations, steps: steps)
                    return
                }
                for file in files {
                    let bundle = try verify.verifier(locations).open(file: file, directory: locations.versionDirectory)
                    let staged = try steps.run(bundle, operation: .install(force: force), acceptNewKey: acceptNewKey)
                    report("Installed", staged)
                }
            } catch {
                throw fail(error)
            }
        }

        private func installLocked(_ lockPath: String, locations: PackageLocations, steps: InstallSteps) throws(PackageError) {
            let wanted = try LockFile.load(file: lockPath)
            var bundles: [String] = []
            for file in files {
                if ManifestFileSystem.kind(of: file) == .directory {
                    bundles += directoryNames(file).filter { $0.hasSuffix("." + BundleLayout.fileExtension) }.map { file + "/" + $0 }
                } else {
                    bundles.append(file)
                }
            }
            // Open every bundle with the key the lock names (the lock is the user's own record).
            var opened: [VerifiedBundle] = []
            for file in bundles {
                var verifier = try verify.verifier(locations)
                let probe = try BundleArchive.read(file: file)
                let index = try BundleIndex.decode(probe.first { $0.path == BundleIndex.fileName }?.bytes ?? [])
                guard let entry = wanted.entry(id: index.id),
                    let record = [entry.current, entry.previous].compactMap({ $0 }).first(where: { $0.version == index.version })
                else {
                    throw PackageError(
                        .lockMismatch, "\(file) is \(index.id) \(index.version), which \(lockPath) does not list",
                        fix: "pass only the bundles the lock file names")
                }
                if let key = record.signerKey { verifier.keyToTrust = try MinisignPublicKey(parsing: key) }
                verifier.allowUnsigned = record.signer == nil
                let bundle = try verifier.open(file: file, directory: locations.versionDirectory)
                guard bundle.indexSHA256 == record.indexSHA256, bundle.signer?.keyIDString == record.signer else {
                    throw PackageError(
                        .lockMismatch,
                        "\(file) (\(index.id) \(index.version)) differs from \(lockPath): index SHA-256 \(bundle.indexSHA256) (lock: \(record.indexSHA256)), signer \(bundle.signer?.keyIDString ?? "none") (lock: \(record.signer ?? "none"))",
                        fix: "use the exact bundle the lock was made with; if it was rebuilt on purpose, install it normally and commit the new lock")
                }
                opened.append(bundle)
            }
            for entry in wanted.providers {
                for record in [entry.previous, entry.current].compactMap({ $0 }) {
                    guard let bundle = opened.first(where: { $0.index.id == entry.id && $0.index.version == record.version }) else {
                        if record == entry.current {
                            throw PackageError(
                                .lockMismatch, "\(lockPath) lists \(entry.id) \(record.version), but no bundle given is that version",
                                fix: "add \(BundleLayout.fileName(id: entry.id, version: record.version)) to the command")
                        }
                        writeStandardError("note: \(entry.id)'s previous version \(record.version) was not given; it cannot be rolled back to here.")
                        continue
                    }
                    let staged = try steps.run(bundle, operation: .install(force: true), acceptNewKey: true)
                    report("Installed", staged)
                }
            }
            // The lock now says exactly what the given one says (previous versions given or not).
            let store = PackageStore(locations: locations)
            try store.exclusively { () throws(PackageError) in
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
                try result.save(file: locations.lockFile)
            }
            print("The installation matches \(lockPath): \(wanted.providers.count) provider(s).")
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

        @Flag(help: "Accept a bundle signed by another key than the installed version.")
        var acceptNewKey = false

        @Flag(help: "Allow a version that is not newer than the installed one.")
        var allowDowngrade = false

        func run() throws {
            let locations = try store.locations()
            let steps = InstallSteps(
                locations: locations, sandbox: IsolationConfiguration.SandboxPolicy(rawValue: store.sandbox) ?? .bestEffort,
                conformance: verify.conformance)
            do throws(PackageError) {
                let bundle = try verify.verifier(locations).open(file: file, directory: locations.versionDirectory)
                let staged = try steps.run(bundle, operation: .upgrade(allowDowngrade: allowDowngrade), acceptNewKey: acceptNewKey)
                report("Upgraded", staged)
            } catch {
                throw fail(error)
            }
        }
    }

    /// `rollback ID`
    struct Rollback: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make an installed provider's previous version active again.")

        @Argument(help: ArgumentHelp("The provider id.", valueName: "id"))
        var id: String

        @OptionGroup var store: StoreOptions

        func run() throws {
            let locations = try store.locations()
            let packageStore = PackageStore(locations: locations)
            do throws(PackageError) {
                let entry = try packageStore.exclusively { () throws(PackageError) in try packageStore.rollback(id: id) }
                print("Rolled back \(id) to \(entry.current.version) (from \(entry.previous?.version ?? "?")).")
            } catch {
                throw fail(error)
            }
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
            let packageStore = PackageStore(locations: locations)
            do throws(PackageError) {
                let entry = try packageStore.exclusively { () throws(PackageError) in try packageStore.uninstall(id: id) }
                print("Uninstalled \(id) \(entry.current.version). Its files stay in \(locations.providerDirectory(id: id)) until `context-host gc`.")
            } catch {
                throw fail(error)
            }
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
                let result = try packageStore.exclusively { () throws(PackageError) in try packageStore.collectGarbage() }
                for path in result.removed { print("removed \(path)") }
                print("Freed \(result.bytes) bytes (\(result.removed.count) folder(s)).")
            } catch {
                throw fail(error)
            }
        }
    }
}

/// One line per installed or upgraded provider.
private func report(_ verb: String, _ staged: PackageStore.Staged) {
    let bundle = staged.bundle
    let signer = bundle.signer.map { "signed by \($0.keyIDString)" } ?? "unsigned"
    let from = staged.replacing.map { " (was \($0.version))" } ?? ""
    print("\(verb) \(bundle.index.id) \(bundle.index.version)\(from): \(bundle.runtimeText), \(signer), probed in a sandboxed worker → \(staged.folder)")
    if let key = bundle.signer, let trusted = bundle.trustedKeysToSave?.key(id: key.keyIDString) {
        print("Now trusting key \(key.keyIDString) for \(trusted.scopes.joined(separator: ", ")) (`context-host keys` lists and removes keys).")
    }
}
