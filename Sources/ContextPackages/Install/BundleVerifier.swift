import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
/// A bundle read and checked end to end, nothing written yet: archive safety, the index against
/// every file, the signature against a trusted key, the manifest against the index, each
/// platform's library against its slot and the manifest's `runtime`.
package struct VerifiedBundle: Sendable {
    /// The bundle file, as the user named it.
    package var file: String
    package var entries: [ArchiveEntry]
    package var index: BundleIndex
    /// SHA-256 of the index bytes (the lock records it; it covers every file).
    package var indexSHA256: String
    /// The key that signed the index; nil for an unsigned bundle (`--allow-unsigned`).
    package var signer: MinisignPublicKey?
    /// The trusted keys with the one accepted by `--trust-key` added (or its scopes widened to
    /// this id), to save once installed; nil when the keys do not change.
    package var trustedKeysToSave: TrustedKeys?
    /// The manifest, parsed as it will be once unpacked into `directory`.
    package var manifest: Manifest
    package var manifestSHA256: String
    /// Every platform's library: its slot, its hash and what it is.
    package var libraries: [Library]
    /// The runtime the libraries carry (the manifest's `runtime`, checked against each binary).
    package var runtime: ProviderRuntime

    package struct Library: Sendable {
        package var platform: String
        package var path: String
        package var sha256: String
        package var binary: ProviderBinary
    }

    /// `native`, `swift-static` or `swift-dynamic 6.3.1`, as the lock records it.
    package var runtimeText: String { runtime.text }

    /// The library of this machine's platform.
    package var hostLibrary: Library? {
        libraries.first { $0.platform == PlatformID.current?.rawValue }
    }

    /// The lock entry this bundle makes.
    package var lockRecord: LockFile.Installed {
        LockFile.Installed(
            version: index.version, signer: signer?.keyIDString, signerKey: signer?.base64, runtime: runtimeText,
            indexSHA256: indexSHA256, manifestSHA256: manifestSHA256,
            libraries: libraries.map { LockFile.Installed.Library(platform: $0.platform, path: $0.path, sha256: $0.sha256) })
    }
}

/// Opens and checks bundles (no writes).
package struct BundleVerifier: Sendable {
    /// The user's trusted keys.
    package var trustedKeys: TrustedKeys
    /// Accept a bundle without a signature.
    package var allowUnsigned = false
    /// A key to trust for this bundle (`--trust-key`), with the scopes to record for it (default:
    /// the bundle's exact id) and the last day it is accepted (`--key-expires`).
    package var keyToTrust: MinisignPublicKey?
    package var scopesForNewKey: [String]?
    package var expiryForNewKey: String?
    package var limits = ArchiveLimits()
    /// Today (UTC, `YYYY-MM-DD`), for key expiry.
    package var today = TrustedKeys.today()

    package init(trustedKeys: TrustedKeys) {
        self.trustedKeys = trustedKeys
    }

    /// Decompresses and reads an archive's bytes (`BundleArchive.read`); tests put a recording
    /// reader here to show which bytes ever reach it.
    package var readArchive: @Sendable (_ bytes: [UInt8], _ limits: ArchiveLimits) throws(PackageError) -> [ArchiveEntry] = {
        (bytes, limits) throws(PackageError) in try BundleArchive.read(bytes, limits: limits)
    }

    /// Reads `file` and checks everything that can be checked before unpacking; `directory` is
    /// where it would be unpacked (the manifest is parsed against it).
    ///
    /// Nothing in the file is decompressed or parsed before a signature over its bytes, by a key
    /// the user trusts (or gives with `--trust-key`), has been verified: the detached signature
    /// beside it (`NAME.ctxp.minisig`) and the one in its gzip header (`EmbeddedSignature`), both
    /// of which `package --sign` writes; where both are there, both must verify with the same key.
    /// A file with neither is refused (`signature-missing`) without being read, unless the user
    /// accepts unsigned bundles (`--allow-unsigned`): only then is an unauthenticated archive
    /// parsed, under the size caps. The index inside must be signed by the same key.
    package func open(file: String, directory: (_ id: String, _ version: String) -> String) throws(PackageError) -> VerifiedBundle {
        let detachedPath = file + BundleLayout.signatureSuffix
        var outer: (key: MinisignPublicKey, trustingNow: Bool)?
        let bytes = try BundleArchive.readBytes(file: file, limits: limits)
        // What is decompressed: the file, or the gzip member its embedded signature covers.
        var member = bytes
        if ManifestFileSystem.kind(of: detachedPath) != .missing {
            let signature = try Self.detachedSignature(detachedPath)
            let found = try signer(of: signature, file: file, what: "the bundle file")
            do throws(PackageError) {
                try signature.verify(bytes, with: found.key)
            } catch {
                throw PackageError(
                    error.code, "\(file) does not match its signature \(detachedPath): \(error.message) Nothing in it was read.",
                    fix: error.fix)
            }
            outer = found
        }
        if let embedded = try Self.embeddedSignature(bytes, file: file) {
            let found = try signer(of: embedded.signature, file: file, what: "the bundle file")
            do throws(PackageError) {
                try embedded.signature.verify(embedded.member, with: found.key)
            } catch {
                throw PackageError(
                    error.code, "\(file) does not match the signature in its gzip header: \(error.message) Nothing in it was read.",
                    fix: error.fix)
            }
            if let outer, outer.key != found.key {
                throw PackageError(
                    .signatureMismatch,
                    "\(file) is signed by key \(outer.key.keyIDString) (\(detachedPath)), but carries a signature by key \(found.key.keyIDString); nothing in it was read",
                    fix: "get the bundle and its .minisig again from its author; both are made by `context-host package --sign KEY`")
            }
            outer = outer ?? found
            member = embedded.member
        }
        if outer == nil, !allowUnsigned {
            throw PackageError(
                .signatureMissing,
                "\(file) carries no signature of its own bytes (none in its gzip header, no \(detachedPath) beside it), so nothing in it was read",
                fix: "ask the author for a bundle made with `context-host package --sign KEY` (or for its .minisig: `minisign -S -m \(file)`), or, if you trust where it came from, run again with --allow-unsigned")
        }
        let entries: [ArchiveEntry]
        do throws(PackageError) {
            entries = try readArchive(member, limits)
        } catch {
            throw PackageError(error.code, "\(file): \(error.message)", fix: error.fix)
        }
        guard let indexEntry = entries.first(where: { $0.path == BundleIndex.fileName }) else {
            throw PackageError(
                .indexInvalid, "\(file) has no \(BundleIndex.fileName); it is not a provider bundle",
                fix: "make bundles with `context-host package DIR`")
        }
        let indexSHA256 = SHA256.hex(of: indexEntry.bytes)
        // Only for messages until the signature is checked: nothing in it is trusted before.
        let claimed = (try? BundleIndex.decode(indexEntry.bytes)).map { "\($0.id) \($0.version)" } ?? "an unreadable index"

        // Who signed the index's exact bytes, before a single byte of it is believed. Only keys
        // the user trusts count: the trusted keys file, or the key given with --trust-key.
        var signer: MinisignPublicKey?
        var trustingNow = false
        if let signatureEntry = entries.first(where: { $0.path == BundleIndex.signatureFileName }) {
            let signature = try MinisignSignature(parsing: String(decoding: signatureEntry.bytes, as: UTF8.self))
            let found = try self.signer(of: signature, file: file, what: "\(file) (\(claimed))")
            try signature.verify(indexEntry.bytes, with: found.key)
            if let outer, outer.key != found.key {
                throw PackageError(
                    .signatureMismatch,
                    "\(file) is signed by key \(outer.key.keyIDString), but its index by key \(found.key.keyIDString)",
                    fix: "get the bundle and its .minisig again from its author; both are made by `context-host package --sign KEY`")
            }
            signer = found.key
            trustingNow = found.trustingNow
        } else if outer != nil {
            throw PackageError(
                .signatureMissing, "\(file) is signed as a file, but its index is not signed",
                fix: "package it again with `context-host package --sign KEY`")
        } else if !allowUnsigned {
            throw PackageError(
                .signatureMissing, "\(file) (\(claimed)) is not signed",
                fix: "ask the author for a signed bundle, or, if you trust where it came from, run again with --allow-unsigned")
        }

        let index = try BundleIndex.decode(indexEntry.bytes)
        // The key may sign this id: a trusted key within its scopes (and not expired); a key given
        // with --trust-key within the scopes given (default: this exact id), added to its scopes
        // if it was trusted already for others.
        var newlyTrusted: TrustedKeys?
        if let key = signer {
            if trustingNow, (try? trustedKeys.authorize(keyID: key.keyID, providerID: index.id, today: today)) == nil
                || scopesForNewKey != nil || expiryForNewKey != nil
            {
                var keys = trustedKeys
                let existing = keys.key(id: key.keyIDString)
                if let expired = existing?.expires, expired < today, expiryForNewKey == nil {
                    throw PackageError(
                        .keyExpired, "Key \(key.keyIDString) expired: it was trusted until \(expired) and today is \(today) (UTC); --trust-key does not renew it",
                        fix: "Check with the author that it is still their key, then renew it: `context-host keys trust RW… --scope \(index.id) --expires YYYY-MM-DD` (or add --key-expires YYYY-MM-DD)")
                }
                let scopes = (existing?.scopes ?? []) + (scopesForNewKey ?? [index.id])
                try keys.trust(
                    key, scopes: scopes, comment: existing?.comment ?? "trusted while installing \(index.id)",
                    expires: expiryForNewKey ?? existing?.expires, today: today)
                _ = try keys.authorize(keyID: key.keyID, providerID: index.id, today: today)
                newlyTrusted = keys
            } else {
                _ = try trustedKeys.authorize(keyID: key.keyID, providerID: index.id, today: today)
            }
        }

        try index.verify(entries)

        // The manifest: valid, and the same id and version as the index.
        guard let manifestEntry = entries.first(where: { $0.path == BundleLayout.manifestFileName }) else {
            throw PackageError(
                .manifestInvalid, "\(file) has no \(BundleLayout.manifestFileName)",
                fix: "make bundles with `context-host package DIR`")
        }
        let target = directory(index.id, index.version)
        let manifest: Manifest
        do {
            manifest = try Manifest.parse(bytes: manifestEntry.bytes, file: "\(file):\(BundleLayout.manifestFileName)", directory: target)
        } catch {
            if let diagnostic = error.diagnostics.first(where: { $0.code == .noLibraryForPlatform }) {
                throw PackageError(.platformUnsupported, "\(index.id) \(index.version): \(diagnostic.message)", fix: diagnostic.hint)
            }
            throw PackageError(
                .manifestInvalid, "the manifest in \(file) is not valid:\n" + error.diagnostics.map { "    \($0)" }.joined(separator: "\n"),
                fix: "fix the manifest and package the provider again (`context-host validate` checks it)")
        }
        guard manifest.id == index.id, manifest.version.description == index.version else {
            throw PackageError(
                .manifestInvalid,
                "\(file): the index says \(index.id) \(index.version) but the manifest says \(manifest.id) \(manifest.version)",
                fix: "package the provider again with `context-host package`; do not edit a bundle by hand")
        }
        guard !manifest.libraries.isEmpty, let runtime = manifest.runtime else {
            throw PackageError(
                .manifestInvalid, "the manifest in \(file) has no 'libraries' and 'runtime'",
                fix: "make bundles with `context-host package DIR`, which fills them in")
        }

        // Each library: present, for the platform of its slot, of the declared runtime.
        var libraries: [VerifiedBundle.Library] = []
        for slot in manifest.libraries {
            guard let entry = entries.first(where: { $0.path == slot.path }), let listed = index.files.first(where: { $0.path == slot.path })
            else {
                throw PackageError(
                    .manifestInvalid, "the manifest in \(file) names the library \(slot.path) for \(slot.platform), which the bundle does not hold",
                    fix: "package the provider again with `context-host package`")
            }
            let binary = try ProviderBinary.inspect(bytes: entry.bytes, name: "\(file):\(slot.path)")
            guard binary.platform.rawValue == slot.platform else {
                throw PackageError(
                    .platformMismatch, "\(file): \(slot.path) is listed for \(slot.platform) but is a library for \(binary.platform.rawValue)",
                    fix: "build the library for \(slot.platform) and package again (`context-host package --library \(slot.platform)=PATH`)")
            }
            if let mismatch = binary.runtimeProblem(declared: runtime, name: "\(file):\(slot.path)") { throw mismatch }
            libraries.append(VerifiedBundle.Library(platform: slot.platform, path: slot.path, sha256: listed.sha256, binary: binary))
        }
        return VerifiedBundle(
            file: file, entries: entries, index: index, indexSHA256: indexSHA256, signer: signer,
            trustedKeysToSave: newlyTrusted, manifest: manifest, manifestSHA256: SHA256.hex(of: manifestEntry.bytes),
            libraries: libraries, runtime: runtime)
    }

    /// The key a signature names, if the user trusts it: the key given with --trust-key
    /// (`trustingNow`), or a trusted one. keyUnknown otherwise, naming --trust-key only when it
    /// was given. Does not verify anything.
    func signer(of signature: MinisignSignature, file: String, what: String) throws(PackageError) -> (key: MinisignPublicKey, trustingNow: Bool) {
        let signatureKeyID = signature.keyIDString
        if let keyToTrust, keyToTrust.keyID == signature.keyID { return (keyToTrust, true) }
        if let known = trustedKeys.key(id: signatureKeyID) { return (known.publicKey, false) }
        if let keyToTrust {
            throw PackageError(
                .keyUnknown,
                "\(what) is signed by key \(signatureKeyID), but --trust-key gave key \(keyToTrust.keyIDString), and \(signatureKeyID) is not among your trusted keys",
                fix: "pass the public key of \(signatureKeyID) (the `RW…` line of its author's .pub file)")
        }
        throw PackageError(
            .keyUnknown,
            "\(what) is signed by key \(signatureKeyID), which is not among your trusted keys (\(trustedKeys.keys.count) in \(PackageLocations.trustedKeysFileName))",
            fix: "get the author's public key (the `RW…` line of their .pub file) from a source you trust, check that its key id is \(signatureKeyID), and run again with --trust-key RW… (it is then trusted for this provider id only; --key-scope 'PREFIX.*' widens that)")
    }

    /// The signature in the gzip header of `bytes` and the member it covers, parsed; nil if there is none.
    static func embeddedSignature(_ bytes: [UInt8], file: String) throws(PackageError) -> (signature: MinisignSignature, member: [UInt8])? {
        do throws(PackageError) {
            guard let split = try EmbeddedSignature.split(bytes) else { return nil }
            return (try MinisignSignature(parsing: split.signature), split.member)
        } catch {
            throw PackageError(error.code, "\(file): the signature in its gzip header: \(error.message)", fix: error.fix)
        }
    }

    /// The detached signature file beside a bundle, read with a size cap.
    static func detachedSignature(_ path: String) throws(PackageError) -> MinisignSignature {
        func unreadable(_ reason: String) -> PackageError {
            PackageError(.signatureInvalid, "cannot read the signature \(path): \(reason)", fix: "get it again from the bundle's author, or remove it")
        }
        let fd = openForReading(path)
        guard fd >= 0 else { throw unreadable(String(cString: strerror(errno))) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw unreadable(String(cString: strerror(errno))) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw unreadable("it is not a regular file") }
        guard status.st_size <= MinisignSignature.maxTextBytes else {
            throw unreadable("it is \(status.st_size) bytes, over the \(MinisignSignature.maxTextBytes)-byte limit")
        }
        let bytes: [UInt8]
        do throws(FileBytes.ReadError) {
            bytes = try FileBytes.read(fd: fd, expectedSize: Int(status.st_size))
        } catch {
            throw unreadable(error.reason)
        }
        do {
            return try MinisignSignature(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw PackageError(error.code, "\(path): \(error.message)", fix: error.fix)
        }
    }

}

/// `open(path, O_RDONLY | O_NONBLOCK)` (a FIFO does not block; it is refused as not a regular
/// file), outside `BundleVerifier`, whose `open(file:directory:)` hides the C function.
private func openForReading(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
}
