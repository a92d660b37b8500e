import ContextHost
import ContextPackages
import ContextHostTestSupport
import ContextProtocol
import ContextProviderKit
import Foundation
import Testing

/// Provider bundles through the real `context-host` binary (issue 27, docs/packages.md): every
/// refusal with its code, the lock file reproduced with `install --locked`, and the bundled
/// providers packaged and installed like any third party's.
@Suite("Packages", .serialized)
struct PackageTests {
    static let manifests = BuildProducts.packageRoot + "/manifests"

    /// A user's folders and an author's key, all in a temporary folder.
    final class Workspace {
        let folder: TemporaryDirectory
        let environment: [String: String]
        let publicKey: String

        init() throws {
            folder = try TemporaryDirectory()
            environment = [
                "XDG_CONFIG_HOME": folder.path + "/config", "XDG_DATA_HOME": folder.path + "/data",
                "XDG_STATE_HOME": folder.path + "/state", "XDG_CACHE_HOME": folder.path + "/cache",
            ]
            let keygen = try CommandRunner.run(["keygen", "--output", folder.path + "/author"], environment: environment)
            try #require(keygen.status == 0, "\(keygen.standardError)")
            publicKey = try #require(
                String(contentsOfFile: folder.path + "/author.pub", encoding: .utf8).split(separator: "\n").last.map(String.init))
        }

        var path: String { folder.path }
        var lockFile: String { path + "/config/context-host/providers.lock" }

        /// Runs `context-host` with this workspace's folders.
        func run(_ arguments: [String], timeout: Double = 120) throws -> CommandResult {
            try CommandRunner.run(arguments, environment: environment, timeout: timeout)
        }

        /// `package MANIFEST --sign author.key`, into `name`.
        @discardableResult
        func package(_ manifest: String, _ name: String, extra: [String] = [], sign: Bool = true) throws -> String {
            let output = path + "/" + name
            let result = try run(["package", manifest, "--output", output] + (sign ? ["--sign", path + "/author.key"] : []) + extra)
            try #require(result.status == 0, "\(result.standardError)")
            return output
        }

        /// A bundled provider (`manifests/<name>.yaml`) packaged and signed as `<name>.ctxp`.
        @discardableResult
        func bundle(_ name: String) throws -> String {
            try package(PackageTests.manifests + "/\(name).yaml", "\(name).ctxp")
        }

        /// Installs `file` trusting the author's key; requires success.
        func install(_ file: String, extra: [String] = []) throws {
            let result = try run(["install", file, "--trust-key", publicKey] + extra)
            try #require(result.status == 0, "\(result.standardError)\(result.standardOutput)")
        }

        /// `bundle(name)`, installed; answers the bundle file.
        @discardableResult
        func installed(_ name: String) throws -> String {
            let file = try bundle(name)
            try install(file)
            return file
        }

        /// A new folder `name` in the workspace.
        func subfolder(_ name: String) throws -> String {
            let folder = path + "/" + name
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return folder
        }
    }

    /// Runs `install` (or another command) and checks it fails with `[code]` and a fix line.
    private func expectRefusal(_ workspace: Workspace, _ arguments: [String], code: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try workspace.run(arguments)
        #expect(result.status != 0, "\(arguments) should fail", sourceLocation: sourceLocation)
        #expect(result.standardError.contains("[\(code)]"), "\(arguments): \(result.standardError)", sourceLocation: sourceLocation)
        #expect(result.standardError.contains("fix:"), "\(result.standardError)", sourceLocation: sourceLocation)
    }

    /// Rewrites one entry of a bundle (without re-signing), into a new file.
    private func tamper(_ bundle: String, _ output: String, entry: String, _ change: (inout [UInt8]) -> Void) throws {
        var entries = try BundleArchive.read(file: bundle)
        let index = try #require(entries.firstIndex { $0.path == entry })
        change(&entries[index].bytes)
        try Data(BundleArchive.write(entries)).write(to: URL(fileURLWithPath: output))
    }

    @Test("an app that embeds the host loads its user's installed providers when its configuration names their folders, and none by default")
    func embeddedHostLoadsInstalled() async throws {
        let workspace = try Workspace()
        try workspace.installed("note")
        let noManifests = try TemporaryDirectory()
        func host(_ locations: PackageLocations?) throws -> InProcessHost {
            var configuration = HostConfiguration(manifestDirectories: [noManifests.path])
            configuration.packageLocations = locations
            // Installed providers are not trusted: they run in workers.
            configuration.isolation.workerExecutable = BuildProducts.hostExecutable
            return try InProcessHost(configuration: configuration)
        }

        let installed = try host(PackageLocations(
            configDirectory: workspace.path + "/config/context-host", storeDirectory: workspace.path + "/data/context-host/packages"))
        _ = try await installed.initialize(InitializeRequest(clientInfo: .init(name: "embedding-test")))
        let note = try #require(try await installed.providers().first { $0.id == "com.contexthost.note" })
        #expect(note.manifestPath?.hasPrefix(workspace.path + "/data/context-host/packages/com.contexthost.note/") == true, "\(note.manifestPath ?? "-")")
        #expect(note.effectiveIsolation == "process")
        // It works: an item collected and previewed through the installed library, in a worker.
        let composer = try await installed.openComposer()
        let started = try await installed.startCollection(providerId: "com.contexthost.note", composerId: composer.composerId)
        let done = try await installed.submit(sessionId: started.sessionId, values: ["title": "Installed", "body": "From the store."])
        guard case .item(let item) = done.outcome else {
            Issue.record("expected an item, got \(done.outcome)")
            await installed.close()
            return
        }
        #expect(try await installed.preview(item).title == "Installed")
        await installed.close()

        let plain = try host(nil)
        _ = try await plain.initialize(InitializeRequest(clientInfo: .init(name: "embedding-test")))
        #expect(try await plain.providers().isEmpty)
        await plain.close()
    }

    @Test("a flipped byte in the library, the index or the manifest is refused; nothing is installed")
    func flippedBytes() throws {
        // A bundle rewritten by anyone but its author has lost the signature of its file, so it is
        // refused unread; with --allow-unsigned, the signed index still catches each change.
        let workspace = try Workspace()
        let bundle = try workspace.bundle("note")
        let flips = [
            ("lib/linux-x86_64/libNoteProvider.so", "index-mismatch"),
            (BundleIndex.fileName, "signature-mismatch"),
            (BundleLayout.manifestFileName, "index-mismatch"),
        ]
        for (entry, code) in flips {
            let tampered = workspace.path + "/tampered.ctxp"
            try tamper(bundle, tampered, entry: entry) { bytes in bytes[bytes.count / 2] ^= 0x20 }
            try expectRefusal(workspace, ["install", tampered, "--trust-key", workspace.publicKey], code: "signature-missing")
            try expectRefusal(workspace, ["install", tampered, "--trust-key", workspace.publicKey, "--allow-unsigned"], code: code)
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.lockFile))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: workspace.path + "/data/context-host/packages/com.contexthost.note"))?.isEmpty ?? true)
    }

    @Test("missing, damaged and foreign signatures, unknown keys, out-of-scope keys and a changed key on install and upgrade are refused")
    func signatures() throws {
        let workspace = try Workspace()
        let signed = try workspace.bundle("note")
        let unsigned = try workspace.package(Self.manifests + "/note.yaml", "unsigned.ctxp", sign: false)
        try expectRefusal(workspace, ["install", unsigned], code: "signature-missing")
        try expectRefusal(workspace, ["install", signed], code: "key-unknown")
        // A damaged signature file.
        let damaged = workspace.path + "/damaged.ctxp"
        try tamper(signed, damaged, entry: BundleIndex.signatureFileName) { bytes in bytes = Array("untrusted comment: x\nnot base64!\n".utf8) }
        try expectRefusal(workspace, ["install", damaged, "--trust-key", workspace.publicKey], code: "signature-missing")
        try expectRefusal(workspace, ["install", damaged, "--trust-key", workspace.publicKey, "--allow-unsigned"], code: "signature-invalid")
        // Another key's signature presented under the trusted key's id.
        let other = MinisignSecretKey.generate()
        let forged = workspace.path + "/forged.ctxp"
        let trusted = try MinisignPublicKey(parsing: workspace.publicKey)
        try tamper(signed, forged, entry: BundleIndex.signatureFileName) { bytes in
            let index = (try? BundleArchive.read(file: signed))?.first { $0.path == BundleIndex.fileName }?.bytes ?? []
            let text = MinisignSignature.sign(index, with: other, trustedComment: "forged", untrustedComment: "forged")
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var raw = [UInt8](Data(base64Encoded: lines[1]) ?? Data())
            raw.replaceSubrange(2..<10, with: trusted.keyID)
            lines[1] = Data(raw).base64EncodedString()
            bytes = Array(lines.joined(separator: "\n").utf8)
        }
        try expectRefusal(workspace, ["install", forged, "--trust-key", workspace.publicKey, "--allow-unsigned"], code: "signature-mismatch")
        // Unsigned with --allow-unsigned installs; the signed build of it is then a key change.
        let allowed = try workspace.run(["install", unsigned, "--allow-unsigned"])
        try #require(allowed.status == 0, "\(allowed.standardError)")
        try expectRefusal(workspace, ["install", signed, "--force", "--trust-key", workspace.publicKey], code: "key-changed")
        let accepted = try workspace.run(["install", signed, "--force", "--trust-key", workspace.publicKey, "--accept-new-key"])
        #expect(accepted.status == 0, "\(accepted.standardError)")
        // Signed by the trusted key now; another author's key for the same id is a change again.
        try other.fileText(comment: "other").write(toFile: workspace.path + "/other.key", atomically: true, encoding: .utf8)
        let otherBundle = workspace.path + "/other.ctxp"
        let packaged = try workspace.run(["package", Self.manifests + "/note.yaml", "--output", otherBundle, "--sign", workspace.path + "/other.key"])
        try #require(packaged.status == 0, "\(packaged.standardError)")
        try expectRefusal(
            workspace, ["install", otherBundle, "--force", "--trust-key", other.publicKey.base64], code: "key-changed")
        // An upgrade (1.0.1) signed by another key: refused before anything is unpacked.
        let folder = workspace.path + "/note-1.0.1"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try String(contentsOfFile: Self.manifests + "/note.yaml", encoding: .utf8)
            .replacingOccurrences(of: "version: 1.0.0", with: "version: 1.0.1")
            .write(toFile: folder + "/note.yaml", atomically: true, encoding: .utf8)
        try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("NoteProvider"))).write(to: URL(fileURLWithPath: folder + "/libNoteProvider.so"))
        let upgrade = workspace.path + "/note-1.0.1.ctxp"
        let repackaged = try workspace.run(["package", folder + "/note.yaml", "--output", upgrade, "--sign", workspace.path + "/other.key"])
        try #require(repackaged.status == 0, "\(repackaged.standardError)")
        try expectRefusal(workspace, ["upgrade", upgrade, "--trust-key", other.publicKey.base64], code: "key-changed")
        #expect(!FileManager.default.fileExists(atPath: workspace.path + "/data/context-host/packages/com.contexthost.note/1.0.1"))
        // A key scoped to other ids may not sign this one.
        let scoped = try Workspace()
        try expectRefusal(
            scoped, ["install", signed, "--trust-key", workspace.publicKey, "--key-scope", "org.other.*"], code: "key-out-of-scope")
        // A key given with --trust-key that is not the one that signed.
        try expectRefusal(scoped, ["install", signed, "--trust-key", scoped.publicKey], code: "key-unknown")
        // `keys`: widen the scope, install, list, remove.
        let widened = try scoped.run(["keys", "trust", workspace.publicKey, "--scope", "org.other.*", "--scope", "com.contexthost.*"])
        #expect(widened.status == 0, "\(widened.standardError)")
        let installed = try scoped.run(["install", signed])
        #expect(installed.status == 0, "\(installed.standardError)")
        let trustedID = try MinisignPublicKey(parsing: workspace.publicKey).keyIDString
        let listed = try scoped.run(["keys", "list"])
        #expect(listed.standardOutput.contains(trustedID) && listed.standardOutput.contains("com.contexthost.*"), "\(listed.standardOutput)")
        #expect(try scoped.run(["keys", "remove", trustedID]).status == 0)
        #expect(!(try scoped.run(["keys", "list"])).standardOutput.contains(trustedID))
        try expectRefusal(scoped, ["keys", "remove", trustedID], code: "key-unknown")
    }

    @Test("unsafe archive entries: '..', absolute, symlink, hard link, device; and a bundle over the size caps")
    func unsafeArchives() throws {
        let workspace = try Workspace()
        let bundle = try workspace.bundle("note")
        // Python's tarfile writes the hostile entries (a real tar writer, not ours).
        let script = """
            import io, sys, tarfile
            source, output, kind = sys.argv[1:4]
            with tarfile.open(source, "r:gz") as original, tarfile.open(output, "w:gz") as out:
                for member in original.getmembers():
                    out.addfile(member, original.extractfile(member))
                info = tarfile.TarInfo({"dotdot": "../evil", "absolute": "/tmp/evil", "symlink": "link",
                                        "hardlink": "hard", "device": "dev", "bomb": "bomb"}[kind])
                if kind == "symlink": info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                elif kind == "hardlink": info.type, info.linkname = tarfile.LNKTYPE, "manifest.yaml"
                elif kind == "device": info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
                if kind == "bomb":
                    info.size = 300 << 20
                    out.addfile(info, io.BytesIO(bytes(info.size)))
                else:
                    if info.type == tarfile.REGTYPE: info.size = 1
                    out.addfile(info, io.BytesIO(b"x") if info.type == tarfile.REGTYPE else None)
            """
        let scriptFile = workspace.path + "/hostile.py"
        try script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        let cases = [
            ("dotdot", "archive-unsafe-path"), ("absolute", "archive-unsafe-path"), ("symlink", "archive-link"),
            ("hardlink", "archive-link"), ("device", "archive-special-file"), ("bomb", "archive-too-large"),
        ]
        for (kind, code) in cases {
            let output = workspace.path + "/\(kind).ctxp"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", scriptFile, bundle, output, kind]
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "python3 could not write the \(kind) archive")
            // Rewritten by Python, so unsigned as a file: refused unread; the archive checks hold
            // behind that for a user who accepts unsigned bundles.
            try expectRefusal(workspace, ["install", output, "--trust-key", workspace.publicKey], code: "signature-missing")
            try expectRefusal(workspace, ["install", output, "--trust-key", workspace.publicKey, "--allow-unsigned"], code: code)
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil"))
        #expect(!FileManager.default.fileExists(atPath: workspace.lockFile))
    }

    @Test("a library for another platform, and a swift-dynamic library of another Swift version, are refused")
    func runtimeCompatibility() throws {
        let workspace = try Workspace()
        let folder = try workspace.subfolder("foreign")
        try String(contentsOfFile: Self.manifests + "/note.yaml", encoding: .utf8).write(toFile: folder + "/note.yaml", atomically: true, encoding: .utf8)
        var library = [UInt8](try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("NoteProvider"))))

        // aarch64 (e_machine 183): packaged for linux-aarch64 only, so nothing runs here.
        var arm = library
        arm[18] = 183
        arm[19] = 0
        try Data(arm).write(to: URL(fileURLWithPath: folder + "/libNoteProvider.so"))
        let armBundle = try workspace.package(folder + "/note.yaml", "arm.ctxp")
        try expectRefusal(workspace, ["install", armBundle, "--trust-key", workspace.publicKey], code: "platform-unsupported")

        // The same bytes forged into the linux-x86_64 slot.
        let forged = workspace.path + "/forged-platform.ctxp"
        var entries = try BundleArchive.read(file: armBundle).filter { $0.path != BundleIndex.signatureFileName && $0.path != BundleIndex.fileName }
        for index in entries.indices {
            if entries[index].path.hasPrefix("lib/") { entries[index].path = "lib/linux-x86_64/libNoteProvider.so" }
            if entries[index].path == BundleLayout.manifestFileName {
                entries[index].bytes = Array(String(decoding: entries[index].bytes, as: UTF8.self)
                    .replacingOccurrences(of: "linux-aarch64: lib/linux-aarch64/", with: "linux-x86_64: lib/linux-x86_64/").utf8)
            }
        }
        let index = BundleIndex.describing(id: "com.contexthost.note", version: "1.0.0", entries: entries)
        try Data(BundleArchive.write([ArchiveEntry(path: BundleIndex.fileName, bytes: index.encoded())] + entries)).write(to: URL(fileURLWithPath: forged))
        try expectRefusal(workspace, ["install", forged, "--allow-unsigned"], code: "platform-mismatch")

        // Another Swift: the version its debug information records, changed in place (same length).
        let host = try #require(HostRuntime.current.swiftVersion)
        let other = host == "6.2.1" ? "6.2.3" : "6.2.1"
        let patched = BytePatch.replacingAll("Swift version \(host)", with: "Swift version \(other)", in: library)
        try #require(patched.count > 0, "no 'Swift version' string in the library")
        library = patched.bytes
        try Data(library).write(to: URL(fileURLWithPath: folder + "/libNoteProvider.so"))
        let otherSwift = try workspace.package(folder + "/note.yaml", "other-swift.ctxp")
        try expectRefusal(workspace, ["install", otherSwift, "--trust-key", workspace.publicKey], code: "swift-version-mismatch")
        #expect(!FileManager.default.fileExists(atPath: workspace.lockFile))
    }

    @Test("a declared runtime that does not match the library is refused at load, in a worker and in-process")
    func runtimeCheckedAtLoad() throws {
        let workspace = try Workspace()
        let folder = try workspace.subfolder("declared")
        try (String(contentsOfFile: Self.manifests + "/note.yaml", encoding: .utf8) + "runtime: swift-static\n")
            .write(toFile: folder + "/note.yaml", atomically: true, encoding: .utf8)
        for isolation in ["process", "in-process"] {
            let list = try workspace.run(["list", "--manifests", folder, "--json", "--isolation", isolation, "--no-installed"])
            let note = (try JSONValue(parsing: list.standardOutput)).arrayValue?.first { $0["id"] == "com.contexthost.note" }
            #expect(note?["status"] == "failed", "\(isolation): \(list.standardOutput)")
            #expect(note?["error"]?["code"] == "runtime-mismatch", "\(isolation): \(String(describing: note))")
        }
    }

    @Test("install --locked reproduces an installation on a clean data folder, and fails on a mismatch")
    func lockedInstall() throws {
        let first = try Workspace()
        let note = try first.installed("note")
        let device = try first.bundle("device-info")
        try first.install(device)
        let lock = try String(contentsOfFile: first.lockFile, encoding: .utf8)
        #expect(lock.contains("com.contexthost.note") && lock.contains("com.contexthost.device-info"))
        #expect(lock.contains("\"runtime\": \"native\""), "\(lock)")

        let second = try Workspace()
        let lockCopy = second.path + "/providers.lock"
        try lock.write(toFile: lockCopy, atomically: true, encoding: .utf8)
        // The lock trusts no key: the user does (docs/packages.md §5).
        let untrusted = try second.run(["install", "--locked", lockCopy, note, device])
        #expect(untrusted.status != 0 && untrusted.standardError.contains("[key-unknown]"), "\(untrusted.standardError)")
        let reproduced = try second.run(["install", "--locked", lockCopy, note, device, "--trust-key", first.publicKey, "--key-scope", "com.contexthost.*"])
        try #require(reproduced.status == 0, "\(reproduced.standardError)")
        #expect(try String(contentsOfFile: second.lockFile, encoding: .utf8) == lock)
        let empty = second.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let list = try second.run(["list", "--manifests", empty, "--json"])
        let ids = (try JSONValue(parsing: list.standardOutput)).arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(Set(ids) == ["com.contexthost.note", "com.contexthost.device-info"], "\(list.standardOutput)\(list.standardError)")

        // The same version, packaged again with one more file: not what the lock says.
        let third = try Workspace()
        let folder = try third.subfolder("rebuilt")
        try String(contentsOfFile: Self.manifests + "/note.yaml", encoding: .utf8).write(toFile: folder + "/note.yaml", atomically: true, encoding: .utf8)
        try "changed\n".write(toFile: folder + "/LICENSE", atomically: true, encoding: .utf8)
        try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("NoteProvider"))).write(to: URL(fileURLWithPath: folder + "/libNoteProvider.so"))
        let rebuilt = try first.package(folder + "/note.yaml", "rebuilt.ctxp")
        try lock.write(toFile: third.path + "/providers.lock", atomically: true, encoding: .utf8)
        #expect(try third.run(["keys", "trust", first.publicKey, "--scope", "com.contexthost.*"]).status == 0)
        let mismatch = try third.run(["install", "--locked", third.path + "/providers.lock", rebuilt, device])
        #expect(mismatch.status != 0)
        #expect(mismatch.standardError.contains("[lock-mismatch]"), "\(mismatch.standardError)")
        let missing = try third.run(["install", "--locked", third.path + "/providers.lock", device])
        #expect(missing.standardError.contains("[lock-mismatch]"), "\(missing.standardError)")
    }

    @Test("an author signs with the reference minisign tool: --write-index, minisign -S, --signature, minisign -S of the bundle")
    func signedWithMinisign() throws {
        let workspace = try Workspace()
        func tool(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["minisign"] + arguments
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "minisign \(arguments)")
        }
        try tool(["-G", "-W", "-p", workspace.path + "/m.pub", "-s", workspace.path + "/m.key"])
        let index = workspace.path + "/index.json"
        let written = try workspace.run(["package", Self.manifests + "/device-info.yaml", "--write-index", index])
        try #require(written.status == 0, "\(written.standardError)")
        try tool(["-S", "-s", workspace.path + "/m.key", "-m", index])
        let bundle = workspace.path + "/device-info.ctxp"
        let packaged = try workspace.run(["package", Self.manifests + "/device-info.yaml", "--signature", index + ".minisig", "--output", bundle])
        try #require(packaged.status == 0, "\(packaged.standardError)")
        let publicKey = try #require(String(contentsOfFile: workspace.path + "/m.pub", encoding: .utf8).split(separator: "\n").last.map(String.init))
        // Only the index is signed: the file is refused unread until its own signature is beside it.
        #expect(packaged.standardOutput.contains("only the index is signed"), "\(packaged.standardOutput)")
        try expectRefusal(workspace, ["install", bundle, "--trust-key", publicKey], code: "signature-missing")
        try tool(["-S", "-s", workspace.path + "/m.key", "-m", bundle])
        let installed = try workspace.run(["install", bundle, "--trust-key", publicKey])
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(installed.standardOutput.contains("signed by"), "\(installed.standardOutput)")
    }

    @Test("a reinstall that fails its probe leaves the installed version as it was")
    func failedReinstallKeepsTheOldVersion() throws {
        let workspace = try Workspace()
        try workspace.installed("note")
        let lock = try String(contentsOfFile: workspace.lockFile, encoding: .utf8)
        // The same id and version, but another provider's library: provider/info will disagree.
        let folder = try workspace.subfolder("impostor")
        try String(contentsOfFile: Self.manifests + "/note.yaml", encoding: .utf8).write(toFile: folder + "/note.yaml", atomically: true, encoding: .utf8)
        try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("FixtureProviders"))).write(to: URL(fileURLWithPath: folder + "/libNoteProvider.so"))
        let impostor = try workspace.package(folder + "/note.yaml", "impostor.ctxp")
        try expectRefusal(workspace, ["install", impostor, "--force"], code: "probe-failed")
        #expect(try String(contentsOfFile: workspace.lockFile, encoding: .utf8) == lock)
        let empty = workspace.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let list = try workspace.run(["list", "--manifests", empty, "--json"])
        let note = (try JSONValue(parsing: list.standardOutput)).arrayValue?.first { $0["id"] == "com.contexthost.note" }
        #expect(note?["status"] == "loaded", "\(list.standardOutput)")
    }

    @Test("install --conformance runs the whole suite in a worker before activating")
    func conformanceBeforeInstall() throws {
        let workspace = try Workspace()
        let bundle = try workspace.bundle("device-info")
        let result = try workspace.run(["install", bundle, "--trust-key", workspace.publicKey, "--conformance"], timeout: 300)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try String(contentsOfFile: workspace.lockFile, encoding: .utf8).contains("com.contexthost.device-info"))
    }

    @Test("the bundled providers package and install like any third party's, and load from the store")
    func bundledProviders() throws {
        let workspace = try Workspace()
        let names = ["note", "location", "calendar", "stock-quote", "health-metric", "device-info"]
        for name in names {
            let bundle = try workspace.bundle(name)
            try workspace.install(bundle)
        }
        let installed = try workspace.run(["list", "--installed"])
        for name in names { #expect(installed.standardOutput.contains("com.contexthost.\(name)"), "\(installed.standardOutput)") }
        // Loaded from the store, nothing from a manifests folder; tampering after install is caught at load.
        let empty = workspace.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let list = try workspace.run(["list", "--manifests", empty, "--json"])
        let providers = (try JSONValue(parsing: list.standardOutput)).arrayValue ?? []
        #expect(providers.count == names.count, "\(list.standardOutput)")
        for provider in providers {
            #expect(provider["status"] == "loaded", "\(provider)")
            #expect(provider["libraryPath"]?.stringValue?.hasPrefix(workspace.path + "/data/context-host/packages/") == true)
        }
        let library = workspace.path + "/data/context-host/packages/com.contexthost.note/1.0.0/lib/linux-x86_64/libNoteProvider.so"
        chmod(library, 0o644)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: library))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        let tampered = try workspace.run(["list", "--manifests", empty, "--json"])
        let note = (try JSONValue(parsing: tampered.standardOutput)).arrayValue?.first { $0["id"] == "com.contexthost.note" }
        #expect(note?["status"] == "failed", "\(tampered.standardOutput)")
        #expect(note?["error"]?["code"]?.stringValue == "sha256-mismatch", "\(String(describing: note))")
    }
}
