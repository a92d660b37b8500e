import ContextHost
import ContextHostTestSupport
import ContextPackages
import ContextProtocol
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Installs are transactions and trust only narrows (issue 39), through the real `context-host`
/// binary: a repair with `install --force`, `install --locked` all or nothing and trusting no key
/// of its own, two commands at once keeping both changes, the default scope, downgrades and key
/// expiry. Each case failed on the build before (said at each test).
@Suite("Package transactions", .serialized)
struct PackageTransactionTests {
    typealias Workspace = PackageTests.Workspace
    static let manifests = PackageTests.manifests

    /// A second author: a key pair in `workspace`, as `NAME.key`, and its public key line.
    static func secondKey(_ workspace: Workspace, name: String = "other") throws -> (file: String, publicKey: String) {
        let key = MinisignSecretKey.generate()
        let file = workspace.path + "/\(name).key"
        try key.fileText(comment: name).write(toFile: file, atomically: true, encoding: .utf8)
        return (file, key.publicKey.base64)
    }

    /// `manifest` packaged as `version`, signed with `key` (default: the author's). For another
    /// version than the manifest's, the library's `"version":"…"` text is changed in place (the C
    /// Device Information provider writes its `provider/info` from one string literal), so the
    /// install probe sees the version the manifest says.
    static func package(_ workspace: Workspace, _ manifest: String, version: String, name: String, key: String? = nil) throws -> String {
        let folder = workspace.path + "/src-\(name)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        let current = try #require(text.split(separator: "\n").first { $0.hasPrefix("version: ") })
        try text.replacingOccurrences(of: String(current), with: "version: \(version)")
            .write(toFile: folder + "/provider.yaml", atomically: true, encoding: .utf8)
        let libraryName = String(try #require(text.split(separator: "\n").first { $0.hasPrefix("library: ") }).dropFirst("library: ".count))
        var library = [UInt8](try Data(contentsOf: URL(fileURLWithPath: BuildProducts.directory + "/" + libraryName)))
        let old = "\"version\":\"\(current.dropFirst("version: ".count))\"", new = "\"version\":\"\(version)\""
        if old != new {
            try #require(old.utf8.count == new.utf8.count, "versions of different lengths")
            let patched = BytePatch.replacingAll(old, with: new, in: library)
            try #require(patched.count > 0, "no \(old) in \(libraryName)")
            library = patched.bytes
        }
        try Data(library).write(to: URL(fileURLWithPath: folder + "/" + libraryName))
        let output = workspace.path + "/\(name).ctxp"
        let result = try workspace.run(["package", folder + "/provider.yaml", "--output", output, "--sign", key ?? workspace.path + "/author.key"])
        try #require(result.status == 0, "\(result.standardError)")
        return output
    }

    /// Fails with `[code]` and a fix line.
    static func expectRefusal(
        _ result: CommandResult, code: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "exit \(result.status): \(result.standardError)", sourceLocation: sourceLocation)
        #expect(result.standardError.contains("[\(code)]"), "\(result.standardError)", sourceLocation: sourceLocation)
        #expect(result.standardError.contains("fix:"), "\(result.standardError)", sourceLocation: sourceLocation)
    }

    static func trustedKeys(_ workspace: Workspace) -> String {
        (try? String(contentsOfFile: workspace.path + "/config/context-host/trusted-keys.json", encoding: .utf8)) ?? ""
    }

    static func keyID(_ publicKey: String) throws -> String { try MinisignPublicKey(parsing: publicKey).keyIDString }

    /// `list --json` with no manifests folder: the installed providers only.
    static func installedList(_ workspace: Workspace) throws -> [JSONValue] {
        let empty = workspace.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let list = try workspace.run(["list", "--manifests", empty, "--json"])
        return (try JSONValue(parsing: list.standardOutput)).arrayValue ?? []
    }

    /// Waits until `install` has unpacked something of `id` (so it holds the store lock and has
    /// read the trusted keys): a version or staging folder in the store.
    static func waitForUnpack(_ workspace: Workspace, id: String, process: HostProcess) throws {
        let folder = workspace.path + "/data/context-host/packages/" + id
        let deadline = Date().addingTimeInterval(60)
        while ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).isEmpty {
            try #require(process.process.isRunning, "the install ended before unpacking: \(process.standardError)")
            try #require(Date() < deadline, "the install did not unpack \(id) within 60 s")
            usleep(5_000)
        }
    }

    @Test("install --force unpacks every file again: a changed manifest or library of the installed copy is repaired (was: 'Installed' and still hash-mismatch)")
    func forceRepairs() throws {
        let workspace = try Workspace()
        let bundle = try workspace.installed("note")
        let folder = workspace.path + "/data/context-host/packages/com.contexthost.note/1.0.0"
        let pristine = try BundleArchive.read(file: bundle)
        for damaged in [BundleLayout.manifestFileName, "lib/linux-x86_64/libNoteProvider.so"] {
            let path = folder + "/" + damaged
            chmod(folder, 0o755)
            chmod(path, 0o644)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("\n# changed\n".utf8))
            try handle.close()
            let broken = try Self.installedList(workspace).first { $0["id"] == "com.contexthost.note" }
            #expect(broken?["status"] != "loaded", "\(damaged) changed but still loaded: \(String(describing: broken))")

            let repaired = try workspace.run(["install", bundle, "--force"])
            #expect(repaired.status == 0, "\(damaged): \(repaired.standardError)")
            let note = try Self.installedList(workspace).first { $0["id"] == "com.contexthost.note" }
            #expect(note?["status"] == "loaded", "\(damaged): \(String(describing: note))")
            for entry in pristine {
                let installed = FileManager.default.contents(atPath: folder + "/" + entry.path).map { [UInt8]($0) }
                #expect(installed == entry.bytes, "\(entry.path) differs from the bundle after install --force (\(damaged) was changed)")
            }
        }
    }

    @Test("install --locked with one of two bundles installs nothing and trusts no key; a lock's previous version is never made active alone (was: one installed, key trusted)")
    func lockedIsAtomic() throws {
        let first = try Workspace()
        let note = try first.installed("note")
        let device = try first.bundle("device-info")
        try first.install(device, extra: ["--key-scope", "com.contexthost.device-info"])
        let lock = first.path + "/two.lock"
        try FileManager.default.copyItem(atPath: first.lockFile, toPath: lock)

        let second = try Workspace()
        let partial = try second.run(["install", "--locked", lock, device, "--trust-key", first.publicKey])
        Self.expectRefusal(partial, code: "lock-mismatch")
        #expect(!FileManager.default.fileExists(atPath: second.lockFile), "a lock file was written")
        #expect(!Self.trustedKeys(second).contains(try Self.keyID(first.publicKey)), "the key was trusted: \(Self.trustedKeys(second))")
        #expect(!FileManager.default.fileExists(atPath: second.path + "/data/context-host/packages/com.contexthost.device-info/1.0.0"))

        // A lock whose current device-info is 1.0.1 (1.0.0 previous), given only 1.0.0.
        let newer = try Self.package(first, Self.manifests + "/device-info.yaml", version: "1.0.1", name: "device-info-1.0.1")
        let upgraded = try first.run(["upgrade", newer])
        try #require(upgraded.status == 0, "\(upgraded.standardError)")
        try FileManager.default.removeItem(atPath: lock)
        try FileManager.default.copyItem(atPath: first.lockFile, toPath: lock)
        let third = try Workspace()
        let previousOnly = try third.run(["install", "--locked", lock, note, device, "--trust-key", first.publicKey, "--key-scope", "com.contexthost.*"])
        Self.expectRefusal(previousOnly, code: "lock-mismatch")
        #expect(!FileManager.default.fileExists(atPath: third.lockFile), "a lock file was written: the previous version is active")
        let authorID = try Self.keyID(first.publicKey)
        #expect(!Self.trustedKeys(third).contains(authorID), "\(Self.trustedKeys(third))")

        // Several bundles in one install: the second fails, so the first is not installed either.
        let broken = first.path + "/broken.ctxp"
        try Data("not a bundle".utf8).write(to: URL(fileURLWithPath: broken))
        let fourth = try Workspace()
        let both = try fourth.run(["install", note, broken, "--trust-key", first.publicKey])
        Self.expectRefusal(both, code: "signature-missing")
        #expect(!FileManager.default.fileExists(atPath: fourth.lockFile), "the first bundle was installed")
        #expect(Self.trustedKeys(fourth).isEmpty, "a key was trusted: \(Self.trustedKeys(fourth))")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: fourth.path + "/data/context-host/packages/com.contexthost.note")) ?? []).isEmpty)
    }

    @Test("a lock file trusts no key: a key removed with `keys remove` stays removed, and the refusal does not speak of a --trust-key nobody gave (was: re-trusted for com.contexthost.*)")
    func lockTrustsNothing() throws {
        let first = try Workspace()
        let note = try first.installed("note")
        let lock = first.path + "/note.lock"
        try FileManager.default.copyItem(atPath: first.lockFile, toPath: lock)
        let id = try Self.keyID(first.publicKey)

        let second = try Workspace()
        #expect(try second.run(["keys", "trust", first.publicKey, "--scope", "com.contexthost.note"]).status == 0)
        #expect(try second.run(["keys", "remove", id]).status == 0)
        let refused = try second.run(["install", "--locked", lock, note])
        Self.expectRefusal(refused, code: "key-unknown")
        #expect(!refused.standardError.contains("--trust-key gave"), "\(refused.standardError)")
        #expect(!Self.trustedKeys(second).contains(id), "the lock re-trusted \(id): \(Self.trustedKeys(second))")
        #expect(!FileManager.default.fileExists(atPath: second.lockFile))

        // A bundle of the same version signed by another author: the message names that key, not a --trust-key.
        let other = try Self.secondKey(first)
        let foreign = first.path + "/foreign.ctxp"
        let packaged = try first.run(["package", Self.manifests + "/note.yaml", "--output", foreign, "--sign", other.file])
        try #require(packaged.status == 0, "\(packaged.standardError)")
        let third = try Workspace()
        let unknown = try third.run(["install", "--locked", lock, foreign])
        Self.expectRefusal(unknown, code: "key-unknown")
        #expect(!unknown.standardError.contains("--trust-key gave"), "\(unknown.standardError)")
        #expect(unknown.standardError.contains(try Self.keyID(other.publicKey)), "\(unknown.standardError)")
        // Trusted by the user, but not the signer the lock records: the lock narrows.
        #expect(try third.run(["keys", "trust", other.publicKey, "--scope", "com.contexthost.note"]).status == 0)
        Self.expectRefusal(try third.run(["install", "--locked", lock, foreign]), code: "lock-mismatch")
        // With the user's trust in the recorded key, it reproduces.
        let reproduced = try third.run(["install", "--locked", lock, note, "--trust-key", first.publicKey])
        #expect(reproduced.status == 0, "\(reproduced.standardError)")
    }

    @Test("two overlapping `install --trust-key` keep both keys (was: the second failed, or one key lost)")
    func overlappingInstallsKeepBothKeys() throws {
        let workspace = try Workspace()
        let other = try Self.secondKey(workspace)
        let device = try workspace.bundle("device-info")
        let note = try Self.package(workspace, Self.manifests + "/note.yaml", version: "1.0.0", name: "note-other", key: other.file)
        // The first runs the conformance suite after unpacking, so the second starts while it holds the store.
        let slow = try HostProcess(
            arguments: ["install", device, "--trust-key", workspace.publicKey, "--conformance"], environment: workspace.environment)
        slow.closeInput()
        try Self.waitForUnpack(workspace, id: "com.contexthost.device-info", process: slow)
        let fast = try workspace.run(["install", note, "--trust-key", other.publicKey], timeout: 300)
        let slowStatus = slow.waitForExit(timeout: 300)
        #expect(slowStatus == 0, "\(slow.standardError)")
        #expect(fast.status == 0, "\(fast.standardError)")
        let keys = Self.trustedKeys(workspace)
        let (authorID, otherID) = (try Self.keyID(workspace.publicKey), try Self.keyID(other.publicKey))
        #expect(keys.contains(authorID) && keys.contains(otherID), "\(keys)")
        let lock = try String(contentsOfFile: workspace.lockFile, encoding: .utf8)
        #expect(lock.contains("com.contexthost.device-info") && lock.contains("com.contexthost.note"), "\(lock)")
    }

    @Test("a `keys remove` while an install runs is not undone by it (was: the install wrote back the removed key)")
    func keysRemoveDuringInstall() throws {
        let workspace = try Workspace()
        let other = try Self.secondKey(workspace)
        let removedID = try Self.keyID(other.publicKey)
        #expect(try workspace.run(["keys", "trust", other.publicKey, "--scope", "org.example.*"]).status == 0)
        let device = try workspace.bundle("device-info")
        let slow = try HostProcess(
            arguments: ["install", device, "--trust-key", workspace.publicKey, "--conformance"], environment: workspace.environment)
        slow.closeInput()
        try Self.waitForUnpack(workspace, id: "com.contexthost.device-info", process: slow)
        let removed = try workspace.run(["keys", "remove", removedID], timeout: 300)
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(slow.waitForExit(timeout: 300) == 0, "\(slow.standardError)")
        let keys = Self.trustedKeys(workspace)
        #expect(!keys.contains(removedID), "the removed key is back: \(keys)")
        #expect(keys.contains(try Self.keyID(workspace.publicKey)), "\(keys)")
    }

    @Test("--trust-key trusts the bundle's exact id unless --key-scope asks for more (was: the id's whole prefix)")
    func exactScopeByDefault() throws {
        let workspace = try Workspace()
        let note = try workspace.installed("note")
        let device = try workspace.bundle("device-info")
        let listed = try workspace.run(["keys", "list"])
        #expect(listed.standardOutput.contains("  com.contexthost.note  "), "\(listed.standardOutput)")
        #expect(!listed.standardOutput.contains("com.contexthost.*"), "\(listed.standardOutput)")
        Self.expectRefusal(try workspace.run(["install", device]), code: "key-out-of-scope")
        // Named again with --trust-key, the key is trusted for this id too; a prefix only when asked.
        try workspace.install(device)
        #expect(try workspace.run(["keys", "list"]).standardOutput.contains("com.contexthost.note,com.contexthost.device-info"))
        let wide = try Workspace()
        let installed = try wide.run(["install", note, device, "--trust-key", workspace.publicKey, "--key-scope", "com.contexthost.*"])
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(try wide.run(["keys", "list"]).standardOutput.contains("  com.contexthost.*  "))
    }

    @Test("an older version needs --allow-downgrade with install --force and install --locked too (was: a silent downgrade)")
    func downgradesNeedConsent() throws {
        let workspace = try Workspace()
        let old = try workspace.bundle("device-info")
        let newer = try Self.package(workspace, Self.manifests + "/device-info.yaml", version: "1.0.1", name: "device-info-1.0.1")
        try workspace.install(old)
        let lockOfOld = workspace.path + "/old.lock"
        try FileManager.default.copyItem(atPath: workspace.lockFile, toPath: lockOfOld)
        #expect(try workspace.run(["upgrade", newer]).status == 0)

        Self.expectRefusal(try workspace.run(["install", old, "--force"]), code: "not-newer")
        Self.expectRefusal(try workspace.run(["install", "--locked", lockOfOld, old]), code: "not-newer")
        #expect(try String(contentsOfFile: workspace.lockFile, encoding: .utf8).contains("\"version\": \"1.0.1\""))
        let allowed = try workspace.run(["install", old, "--force", "--allow-downgrade"])
        #expect(allowed.status == 0, "\(allowed.standardError)")
        let device = try Self.installedList(workspace).first { $0["id"] == "com.contexthost.device-info" }
        #expect(device?["version"] == "1.0.0", "\(String(describing: device))")
        // Reinstalling the same version is not a downgrade.
        #expect(try workspace.run(["install", old, "--force"]).status == 0)
    }

    @Test("a trusted key can carry an expiry date: `keys trust --expires`, `--key-expires`; an expired key is refused with key-expired")
    func keyExpiry() throws {
        let workspace = try Workspace()
        let note = try workspace.bundle("note")
        let id = try Self.keyID(workspace.publicKey)
        let trusted = try workspace.run(["keys", "trust", workspace.publicKey, "--scope", "com.contexthost.note", "--expires", "2099-12-31"])
        #expect(trusted.status == 0, "\(trusted.standardError)")
        #expect(try workspace.run(["keys", "list"]).standardOutput.contains("expires 2099-12-31"))
        Self.expectRefusal(
            try workspace.run(["keys", "trust", workspace.publicKey, "--scope", "com.contexthost.note", "--expires", "2020-01-01"]),
            code: "key-invalid")
        Self.expectRefusal(
            try workspace.run(["keys", "trust", workspace.publicKey, "--scope", "com.contexthost.note", "--expires", "2027-02-30"]),
            code: "key-invalid")
        #expect(try workspace.run(["install", note]).status == 0)

        // The same key, its date passed (as the file would say a year on).
        let file = workspace.path + "/config/context-host/trusted-keys.json"
        let text = try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "2099-12-31", with: "2020-01-01")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        #expect(try workspace.run(["keys", "list"]).standardOutput.contains("expired 2020-01-01"))
        let refused = try workspace.run(["install", note, "--force"])
        Self.expectRefusal(refused, code: "key-expired")
        #expect(refused.standardError.contains(id) && refused.standardError.contains("2020-01-01"), "\(refused.standardError)")
        // --trust-key does not silently renew it; --key-expires does.
        Self.expectRefusal(try workspace.run(["install", note, "--force", "--trust-key", workspace.publicKey]), code: "key-expired")
        let renewed = try workspace.run(["install", note, "--force", "--trust-key", workspace.publicKey, "--key-expires", "2099-01-01"])
        #expect(renewed.status == 0, "\(renewed.standardError)")
        #expect(Self.trustedKeys(workspace).contains("\"expires\": \"2099-01-01\""), "\(Self.trustedKeys(workspace))")
    }

    @Test("the bundle file's own signature (NAME.ctxp.minisig, minisign's format) is checked before a byte of it is decompressed (was: gunzip and tar first)")
    func bundleSignatureBeforeParsing() throws {
        let workspace = try Workspace()
        let bundle = try workspace.bundle("note")
        let detached = bundle + ".minisig"
        #expect(FileManager.default.fileExists(atPath: detached), "package --sign wrote no \(detached)")
        // The reference tool verifies it as it is.
        let keyFile = workspace.path + "/author.pub"
        let minisign = try Shell.run("minisign -V -q -p '\(keyFile)' -m '\(bundle)'", in: workspace.path, timeout: 60)
        #expect(minisign.status == 0, "minisign -V: \(minisign.output)")

        // Bytes that are not even gzip, under the bundle's signature: refused by the signature,
        // not by the decompressor.
        let garbage = workspace.path + "/garbage.ctxp"
        try Data(repeating: 0x1f, count: 4096).write(to: URL(fileURLWithPath: garbage))
        try FileManager.default.copyItem(atPath: detached, toPath: garbage + ".minisig")
        let refused = try workspace.run(["install", garbage, "--trust-key", workspace.publicKey])
        Self.expectRefusal(refused, code: "signature-mismatch")
        #expect(refused.standardError.contains("Nothing in it was read"), "\(refused.standardError)")

        // One flipped bit in the compressed stream: the same.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bundle)))
        bytes[bytes.count / 2] ^= 0x01
        let flipped = workspace.path + "/flipped.ctxp"
        try Data(bytes).write(to: URL(fileURLWithPath: flipped))
        try FileManager.default.copyItem(atPath: detached, toPath: flipped + ".minisig")
        Self.expectRefusal(try workspace.run(["install", flipped, "--trust-key", workspace.publicKey]), code: "signature-mismatch")

        // The file signed by another key than its index: refused.
        let other = try Self.secondKey(workspace)
        let otherKey = try MinisignSecretKey(parsing: String(contentsOfFile: other.file, encoding: .utf8), password: nil)
        let mixed = workspace.path + "/mixed.ctxp"
        try FileManager.default.copyItem(atPath: bundle, toPath: mixed)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bundle)))
        try MinisignSignature.sign(original, with: otherKey, trustedComment: "x", untrustedComment: "x")
            .write(toFile: mixed + ".minisig", atomically: true, encoding: .utf8)
        #expect(try workspace.run(["keys", "trust", other.publicKey, "--scope", "com.contexthost.note"]).status == 0)
        Self.expectRefusal(try workspace.run(["install", mixed, "--trust-key", workspace.publicKey]), code: "signature-mismatch")
        #expect(!FileManager.default.fileExists(atPath: workspace.lockFile))

        // The genuine pair installs.
        try workspace.install(bundle)
    }

    @Test("a gzip bomb signed by nobody is refused unread in every install mode (was: inflated to the cap first); signed or accepted unsigned, it is read (controls)")
    func hostileBundleUnread() throws {
        let workspace = try Workspace()
        let fixtures = workspace.path + "/hostile"
        let made = try Shell.run(
            "python3 '\(BuildProducts.packageRoot)/Tests/Fixtures/bundles/make-hostile.py' '\(fixtures)'", in: workspace.path, timeout: 120)
        try #require(made.status == 0, "make-hostile.py: \(made.output)")
        let bomb = workspace.path + "/bomb.ctxp"
        try FileManager.default.copyItem(atPath: fixtures + "/bomb.ctxp", toPath: bomb)
        let emptyLock = workspace.path + "/empty.lock"
        try LockFile().save(file: emptyLock)
        let trust = ["--trust-key", workspace.publicKey]

        // Without a signature of the file: refused before a byte is inflated, whatever the mode.
        for arguments in [["install", bomb], ["install", "--force", bomb], ["upgrade", bomb], ["install", "--locked", emptyLock, bomb]] {
            let refused = try workspace.run(arguments + trust)
            Self.expectRefusal(refused, code: "signature-missing")
            #expect(refused.standardError.contains("nothing in it was read"), "\(arguments): \(refused.standardError)")
        }
        // A .minisig beside it from a key nobody trusts: the same, in every mode.
        let stranger = MinisignSecretKey.generate()
        let bombBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bomb)))
        try MinisignSignature.sign(bombBytes, with: stranger, trustedComment: "x", untrustedComment: "x")
            .write(toFile: bomb + ".minisig", atomically: true, encoding: .utf8)
        for arguments in [["install", bomb], ["install", "--locked", emptyLock, bomb]] {
            Self.expectRefusal(try workspace.run(arguments + trust), code: "key-unknown")
        }
        // Controls: the user accepts unsigned bundles, or the author really signed the file; then
        // (and only then) it is inflated, and stops at the cap.
        try FileManager.default.removeItem(atPath: bomb + ".minisig")
        Self.expectRefusal(try workspace.run(["install", bomb, "--allow-unsigned"]), code: "archive-too-large")
        let author = try MinisignSecretKey(
            parsing: String(contentsOfFile: workspace.path + "/author.key", encoding: .utf8), password: nil)
        try MinisignSignature.sign(bombBytes, with: author, trustedComment: "x", untrustedComment: "x")
            .write(toFile: bomb + ".minisig", atomically: true, encoding: .utf8)
        Self.expectRefusal(try workspace.run(["install", bomb] + trust), code: "archive-too-large")
        Self.expectRefusal(try workspace.run(["install", "--locked", emptyLock, bomb] + trust), code: "archive-too-large")
        #expect(!FileManager.default.fileExists(atPath: workspace.lockFile))
    }

    @Test("a command killed between writing the lock file and the keys leaves a journal; the next command completes it (was: the key was lost)")
    func crashBetweenWrites() throws {
        let workspace = try Workspace()
        let note = try workspace.bundle("note")
        let config = workspace.path + "/config/context-host"
        let keysFile = config + "/trusted-keys.json"
        let journal = config + "/.store-journal"
        let authorID = try Self.keyID(workspace.publicKey)
        func crashing(_ point: String, _ arguments: [String]) throws -> CommandResult {
            var environment = workspace.environment
            environment["CONTEXT_HOST_TEST_CRASH_AT"] = point
            return try CommandRunner.run(arguments, environment: environment, timeout: 120)
        }

        // Killed after the lock file is in place and before the keys file is: the install is
        // recorded, the key that it trusted not yet.
        let crashed = try crashing("between-renames", ["install", note, "--trust-key", workspace.publicKey])
        try #require(crashed.status == 86, "exit \(crashed.status): \(crashed.standardError)")
        #expect(try String(contentsOfFile: workspace.lockFile, encoding: .utf8).contains("com.contexthost.note"))
        #expect(!FileManager.default.fileExists(atPath: keysFile), "the keys were written before the crash point")
        #expect(FileManager.default.fileExists(atPath: journal))
        #expect(FileManager.default.fileExists(atPath: keysFile + ".pending"))
        // The next command (even `keys list`) completes it: both files say the same thing.
        let listed = try workspace.run(["keys", "list"])
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(listed.standardOutput.contains(authorID), "\(listed.standardOutput)")
        #expect(listed.standardError.contains("completed an interrupted change"), "\(listed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: journal))
        #expect(!FileManager.default.fileExists(atPath: keysFile + ".pending"))
        #expect(Self.trustedKeys(workspace).contains(authorID))
        // And the store is whole: a second install of the same version is refused as installed,
        // an upgrade path needs no --trust-key (the key was kept).
        Self.expectRefusal(try workspace.run(["install", note]), code: "already-installed")

        // Killed before the journal was written: nothing happened, and the next command says so.
        let fresh = try Workspace()
        let freshConfig = fresh.path + "/config/context-host"
        var environment = fresh.environment
        environment["CONTEXT_HOST_TEST_CRASH_AT"] = "before-journal"
        let early = try CommandRunner.run(["install", note, "--trust-key", workspace.publicKey], environment: environment, timeout: 120)
        try #require(early.status == 86, "exit \(early.status): \(early.standardError)")
        #expect(FileManager.default.fileExists(atPath: freshConfig + "/providers.lock.pending"))
        #expect(!FileManager.default.fileExists(atPath: fresh.lockFile))
        let none = try fresh.run(["keys", "list"])
        #expect(none.standardOutput.contains("No trusted keys"), "\(none.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: freshConfig + "/providers.lock.pending"))
        #expect(!FileManager.default.fileExists(atPath: freshConfig + "/trusted-keys.json.pending"))
        #expect(!FileManager.default.fileExists(atPath: fresh.lockFile))
        // The unpacked version is left for gc, and the install works normally afterwards.
        let installed = try fresh.run(["install", note, "--trust-key", workspace.publicKey])
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(Self.trustedKeys(fresh).contains(authorID))
    }
}
