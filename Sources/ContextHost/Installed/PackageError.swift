/// A stable, machine-readable code for each way packaging, installing or loading an installed
/// provider can fail. `docs/packages.md` lists every code with its meaning and fix; scripts may
/// match on the raw value.
package struct PackageErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    package var rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }
    package var description: String { rawValue }

    // The archive (gzip + tar)
    /// The file is not a gzip'd tar, or is truncated or damaged.
    package static let archiveCorrupt: Self = "archive-corrupt"
    /// The archive, one file in it, or the number of entries is over a size cap.
    package static let archiveTooLarge: Self = "archive-too-large"
    /// An entry's path is absolute, contains `..`, is empty, or is otherwise unsafe.
    package static let archiveUnsafePath: Self = "archive-unsafe-path"
    /// A symbolic or hard link entry.
    package static let archiveLink: Self = "archive-link"
    /// A device, FIFO or other special entry.
    package static let archiveSpecialFile: Self = "archive-special-file"
    /// Two entries with the same path.
    package static let archiveDuplicateEntry: Self = "archive-duplicate-entry"

    // The index (`ctxp-bundle.json`)
    /// The index is missing, is not valid JSON, or lacks a field.
    package static let indexInvalid: Self = "index-invalid"
    /// The index's format version is not one this host reads.
    package static let indexUnsupportedFormat: Self = "index-unsupported-format"
    /// A file's size or SHA-256 differs from the index.
    package static let indexMismatch: Self = "index-mismatch"
    /// The index lists a file the archive does not hold.
    package static let indexMissingFile: Self = "index-missing-file"
    /// The archive holds a file the index does not list.
    package static let indexExtraFile: Self = "index-extra-file"

    // Signatures and keys
    /// The bundle has no signature (install it with `--allow-unsigned` only if you trust its source).
    package static let signatureMissing: Self = "signature-missing"
    /// The signature file is not in the minisign format.
    package static let signatureInvalid: Self = "signature-invalid"
    /// The signature does not verify: the index was changed after signing, or another key signed it.
    package static let signatureMismatch: Self = "signature-mismatch"
    /// The signing key is not among the trusted keys.
    package static let keyUnknown: Self = "key-unknown"
    /// The signing key is trusted, but not for this provider id.
    package static let keyOutOfScope: Self = "key-out-of-scope"
    /// An upgrade is signed by another key than the installed version.
    package static let keyChanged: Self = "key-changed"
    /// A key file is not in the minisign format, or cannot be read.
    package static let keyInvalid: Self = "key-invalid"
    /// The trusted key's expiry date has passed.
    package static let keyExpired: Self = "key-expired"

    // The manifest and the binaries
    /// The bundled manifest is invalid (the manifest diagnostics follow), or disagrees with the index.
    package static let manifestInvalid: Self = "manifest-invalid"
    /// The bundle has no library for this machine's platform.
    package static let platformUnsupported: Self = "platform-unsupported"
    /// A library is built for another platform than the slot it is in (or than this machine).
    package static let platformMismatch: Self = "platform-mismatch"
    /// A `swift-dynamic` library was built by another Swift version than this host's runtime.
    package static let swiftVersionMismatch: Self = "swift-version-mismatch"
    /// A shared library the provider needs is not on this machine.
    package static let missingDependency: Self = "missing-dependency"
    /// The library needs a newer glibc than this machine has.
    package static let glibcTooOld: Self = "glibc-too-old"
    /// A library is not a valid ELF or Mach-O shared library.
    package static let binaryInvalid: Self = "binary-invalid"
    /// The manifest's `runtime` disagrees with what the binary is.
    package static let runtimeMismatch: Self = "runtime-mismatch"

    // Install, upgrade, rollback, uninstall
    /// The throwaway worker could not load the provider, or `provider/info` disagreed with the manifest.
    package static let probeFailed: Self = "probe-failed"
    /// `--conformance` found problems.
    package static let conformanceFailed: Self = "conformance-failed"
    /// This id is installed already (use `upgrade`).
    package static let alreadyInstalled: Self = "already-installed"
    /// No provider with this id is installed.
    package static let notInstalled: Self = "not-installed"
    /// `rollback` with no previous version recorded.
    package static let noPreviousVersion: Self = "no-previous-version"
    /// `upgrade` to a version that is not newer (use `--allow-downgrade`).
    package static let notNewer: Self = "not-newer"
    /// The lock file cannot be read or is invalid.
    package static let lockInvalid: Self = "lock-invalid"
    /// `install --locked`: a bundle differs from the lock file.
    package static let lockMismatch: Self = "lock-mismatch"
    /// An installed file's SHA-256 differs from the lock file (checked at load).
    package static let hashMismatch: Self = "hash-mismatch"
    /// Reading or writing the store, the lock or the keys failed (the system's reason follows).
    package static let storeIO: Self = "store-io"

    /// Every code, in documentation order (docs/packages.md lists each; a test checks it).
    package static let all: [PackageErrorCode] = [
        .archiveCorrupt, .archiveTooLarge, .archiveUnsafePath, .archiveLink, .archiveSpecialFile, .archiveDuplicateEntry,
        .indexInvalid, .indexUnsupportedFormat, .indexMismatch, .indexMissingFile, .indexExtraFile,
        .signatureMissing, .signatureInvalid, .signatureMismatch, .keyUnknown, .keyOutOfScope, .keyChanged, .keyInvalid, .keyExpired,
        .manifestInvalid, .platformUnsupported, .platformMismatch, .swiftVersionMismatch, .missingDependency, .glibcTooOld,
        .binaryInvalid, .runtimeMismatch,
        .probeFailed, .conformanceFailed, .alreadyInstalled, .notInstalled, .noPreviousVersion, .notNewer, .lockInvalid,
        .lockMismatch, .hashMismatch, .storeIO,
    ]
}

/// What went wrong, where, and how to fix it: printed as `[code] message` and a `fix:` line.
package struct PackageError: Error, Sendable, Equatable, CustomStringConvertible {
    package var code: PackageErrorCode
    /// What is wrong, naming the file, entry or key concerned.
    package var message: String
    /// What the user can do about it.
    package var fix: String

    package init(_ code: PackageErrorCode, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    package var description: String { "[\(code)] \(message)\n  fix: \(fix)" }
}
