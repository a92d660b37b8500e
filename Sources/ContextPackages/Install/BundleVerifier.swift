import ContextHost
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
    /// The trusted keys with the one accepted by `--trust-key` added, to save once installed.
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
    /// A key to trust for this bundle (`--trust-key`), with the scopes to record for it.
    package var keyToTrust: MinisignPublicKey?
    package var scopesForNewKey: [String]?
    package var limits = ArchiveLimits()

    package init(trustedKeys: TrustedKeys) {
        self.trustedKeys = trustedKeys
    }

    /// Reads `file` and checks everything that can be checked before unpacking; `directory` is
    /// where it would be unpacked (the manifest is parsed against it).
    package func open(file: String, directory: (_ id: String, _ version: String) -> String) throws(PackageError) -> VerifiedBundle {
        let entries = try BundleArchive.read(file: file, limits: limits)
        guard let indexEntry = entries.first(where: { $0.path == BundleIndex.fileName }) else {
            throw PackageError(
                .indexInvalid, "\(file) has no \(BundleIndex.fileName); it is not a provider bundle",
                fix: "make bundles with `context-host package DIR`")
        }
        let indexSHA256 = SHA256.hex(of: indexEntry.bytes)
        // Only for messages until the signature is checked: nothing in it is trusted before.
        let claimed = (try? BundleIndex.decode(indexEntry.bytes)).map { "\($0.id) \($0.version)" } ?? "an unreadable index"

        // Who signed the index's exact bytes, before a single byte of it is believed.
        var signer: MinisignPublicKey?
        var newlyTrusted: TrustedKeys?
        var keyToAuthorize: (keys: TrustedKeys, keyID: [UInt8])?
        if let signatureEntry = entries.first(where: { $0.path == BundleIndex.signatureFileName }) {
            let signature = try MinisignSignature(parsing: String(decoding: signatureEntry.bytes, as: UTF8.self))
            let signatureKeyID = signature.keyIDString
            if let known = trustedKeys.key(id: signatureKeyID) {
                try signature.verify(indexEntry.bytes, with: known.publicKey)
                signer = known.publicKey
                keyToAuthorize = (trustedKeys, signature.keyID)
            } else if let keyToTrust {
                guard keyToTrust.keyID == signature.keyID else {
                    throw PackageError(
                        .keyUnknown,
                        "\(file) (\(claimed)) is signed by key \(signatureKeyID), but --trust-key gave key \(keyToTrust.keyIDString)",
                        fix: "pass the public key of \(signatureKeyID) (the `RW…` line of its author's .pub file)")
                }
                try signature.verify(indexEntry.bytes, with: keyToTrust)
                signer = keyToTrust
                newlyTrusted = trustedKeys
            } else {
                throw PackageError(
                    .keyUnknown,
                    "\(file) (\(claimed)) is signed by key \(signatureKeyID), which is not among your trusted keys (\(trustedKeys.keys.count) in \(PackageLocations.trustedKeysFileName))",
                    fix: "get the author's public key (the `RW…` line of their .pub file) from a source you trust, check that its key id is \(signatureKeyID), and run again with --trust-key RW… (it is then trusted for the bundle id's prefix, e.g. com.example.*; --key-scope changes that)")
            }
        } else if !allowUnsigned {
            throw PackageError(
                .signatureMissing, "\(file) (\(claimed)) is not signed",
                fix: "ask the author for a signed bundle, or, if you trust where it came from, run again with --allow-unsigned")
        }

        let index = try BundleIndex.decode(indexEntry.bytes)
        // The key may sign this id: a trusted key within its scopes, a new one within the scopes given.
        if var keys = newlyTrusted, let key = signer {
            try keys.trust(key, scopes: scopesForNewKey ?? [Self.defaultScope(for: index.id)], comment: "trusted while installing \(index.id)")
            _ = try keys.authorize(keyID: key.keyID, providerID: index.id)
            newlyTrusted = keys
        } else if let (keys, keyID) = keyToAuthorize {
            _ = try keys.authorize(keyID: keyID, providerID: index.id)
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

    /// `com.example.*` for `com.example.weather`: the scope a newly trusted key gets by default.
    package static func defaultScope(for id: String) -> String {
        let labels = id.split(separator: ".")
        return labels.count > 1 ? labels.dropLast().joined(separator: ".") + ".*" : id
    }
}
