import CContextProvider
import CHostSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a provider could not be loaded or opened. Carries a stable code, a sentence and a fix.
package struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
    package var code: String
    package var message: String
    package var hint: String

    package init(code: String, message: String, hint: String) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    package var description: String { "[\(code)] \(message) \(hint)" }
}

/// A provider library opened with `dlopen` and its checked function table.
///
/// Libraries are opened with `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE` and never closed:
/// unloading a Swift library crashes the process later (docs/provider-abi.md). Reloading means restarting
/// the process (or the worker).
package final class ProviderLibrary: @unchecked Sendable {
    /// The canonical path of the file that was loaded.
    package let path: String
    /// The function table; valid for the life of the process.
    package let table: UnsafePointer<ctxp_provider_v1>

    private init(path: String, table: UnsafePointer<ctxp_provider_v1>) {
        self.path = path
        self.table = table
    }

    private static let cache = Mutex<[String: ProviderLibrary]>([:])

    /// Loads the library at `path`, checking the pin on the bytes actually loaded.
    ///
    /// The file is opened once and everything after reads through that descriptor:
    /// - `confined` (the host's and the worker's loads, whose `path` is the canonical path the
    ///   `LibraryResolver` checked against its allowed folder): the open refuses symbolic links in
    ///   every path component (Linux `openat2(RESOLVE_NO_SYMLINKS)`), so a folder swapped for a
    ///   link after the check cannot redirect the load outside the allowed folders.
    /// - With a `sha256` pin, the bytes are read from the descriptor, hashed, and the very same
    ///   bytes are copied into a sealed anonymous memory file (`memfd`, sealed against writes) that
    ///   is loaded through `/proc/self/fd/N`. Neither a swap of the file nor an in-place write to it
    ///   can change what is loaded after the check.
    /// - Without a pin, the library is loaded by `path` after the checked open succeeded (so its
    ///   `$ORIGIN` dependencies resolve); a swap between that open and `dlopen` is not detected —
    ///   pin the library to close that window.
    package static func load(path: String, sha256: String?, confined: Bool = false) throws(LoadError) -> ProviderLibrary {
        let key = path + "\u{0}" + (sha256 ?? "")
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let library = try open(path: path, sha256: sha256, confined: confined)
        cache.withLock { $0[key] = library }
        return library
    }

    private static func open(path: String, sha256: String?, confined: Bool) throws(LoadError) -> ProviderLibrary {
        let fd = confined ? ctxh_open_no_symlinks(path) : Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            if error == ENOENT || error == ENOTDIR {
                throw LoadError(
                    code: "library-not-found", message: "Library '\(path)' does not exist.",
                    hint: "Build the provider (swift build) or fix the manifest's 'library' field.")
            }
            if error == ELOOP {
                throw LoadError(
                    code: "library-path-escape",
                    message: "Library '\(path)' is now reached through a symbolic link; its path changed after it was checked against its allowed folder.",
                    hint: "Put the library file itself in the manifest's folder or a --library-path folder, or start the host with --allow-outside-library-paths.")
            }
            throw LoadError(code: "library-unreadable", message: "Cannot open '\(path)': \(String(cString: strerror(error))).", hint: "Check the file's permissions.")
        }
        defer { close(fd) }
        var statBuffer = stat()
        guard fstat(fd, &statBuffer) == 0, (statBuffer.st_mode & S_IFMT) == S_IFREG else {
            throw LoadError(code: "library-not-found", message: "Library '\(path)' is not a regular file.", hint: "Point the manifest's 'library' at the .so file.")
        }
        // Unpinned: loaded by its canonical path, so `$ORIGIN` dependencies next to it still resolve.
        var loadPath = path
        var cleanup: (() -> Void)?
        if let sha256 {
            let bytes: [UInt8]
            do {
                bytes = try FileBytes.read(fd: fd, expectedSize: Int(statBuffer.st_size))
            } catch {
                throw LoadError(code: "library-unreadable", message: "Cannot read '\(path)': \(error.reason).", hint: "Check the file's permissions.")
            }
            let actual = bytes.withUnsafeBytes { SHA256.hex(of: $0) }
            guard actual == sha256.lowercased() else {
                throw LoadError(
                    code: "sha256-mismatch",
                    message: "Library '\(path)' has sha256 \(actual), but the manifest pins \(sha256.lowercased()).",
                    hint: "If you rebuilt or updated the provider on purpose, update the manifest's 'sha256' to \(actual); otherwise the file was changed by someone else and must not be loaded.")
            }
            (loadPath, cleanup) = try privateCopy(of: bytes, name: path)
        }
        defer { cleanup?() }
        guard let handle = dlopen(loadPath, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw LoadError(
                code: "library-load-failed", message: "dlopen failed for '\(path)': \(reason)",
                hint: "Make sure the library was built for this platform and its dependencies are installed.")
        }
        guard let symbol = dlsym(handle, CTXP_ENTRY_SYMBOL_V1) else {
            throw LoadError(
                code: "entry-symbol-missing",
                message: "Library '\(path)' does not export '\(CTXP_ENTRY_SYMBOL_V1)'.",
                hint: "Export it with @_cdecl(\"\(CTXP_ENTRY_SYMBOL_V1)\") (ContextProviderKit) or define it in C; see docs/provider-abi.md.")
        }
        let entry = unsafeBitCast(symbol, to: ctxp_entry_v1_fn.self)
        guard let table = entry() else {
            throw LoadError(code: "entry-returned-null", message: "'\(CTXP_ENTRY_SYMBOL_V1)' in '\(path)' returned NULL.", hint: "Return a pointer to a static ctxp_provider_v1 table.")
        }
        let version = table.pointee.abi_version
        guard version == CTXP_ABI_VERSION else {
            throw LoadError(
                code: "abi-version-mismatch",
                message: "Library '\(path)' implements provider ABI version \(version); this host supports version \(CTXP_ABI_VERSION).",
                hint: "Rebuild the provider against this host's context_provider.h (ABI \(CTXP_ABI_VERSION)), or use a host that supports ABI \(version).")
        }
        let minimumSize = MemoryLayout<ctxp_provider_v1>.size
        guard Int(table.pointee.struct_size) >= minimumSize else {
            throw LoadError(
                code: "abi-table-too-small",
                message: "Library '\(path)' declares a function table of \(table.pointee.struct_size) bytes; ABI \(CTXP_ABI_VERSION) needs at least \(minimumSize).",
                hint: "Set struct_size = sizeof(ctxp_provider_v1) and rebuild against the current header.")
        }
        guard table.pointee.open != nil, table.pointee.call != nil, table.pointee.close != nil else {
            throw LoadError(code: "abi-table-incomplete", message: "Library '\(path)' leaves open, call or close NULL.", hint: "Fill every function pointer of ctxp_provider_v1.")
        }
        return ProviderLibrary(path: path, table: table)
    }

    /// Writes verified bytes to a file only this process can reach, for dlopen.
    ///
    /// On Linux the file is unlinked at once and loaded through `/proc/self/fd/N`, so no other
    /// process can swap it between the hash check and the load.
    private static func privateCopy(of bytes: [UInt8], name: String) throws(LoadError) -> (String, () -> Void) {
        #if os(Linux)
        // Preferred: a sealed anonymous memory file, which has no name anyone else could open.
        let memfd = ctxh_memfd_create("ctxp-verified")
        if memfd >= 0 {
            if bytes.withUnsafeBytes({ writeAll(memfd, $0) }), ctxh_seal_readonly(memfd) == 0 {
                return ("/proc/self/fd/\(memfd)", { close(memfd) })
            }
            close(memfd)
        }
        #endif
        var template = Array("/tmp/ctxp-verified-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw LoadError(code: "library-load-failed", message: "Cannot create a private copy of '\(name)' for loading.", hint: "Check that /tmp is writable.")
        }
        let tempPath = String(cString: template)
        let ok = bytes.withUnsafeBytes { writeAll(fd, $0) }
        guard ok else {
            close(fd)
            unlink(tempPath)
            throw LoadError(code: "library-load-failed", message: "Cannot write a private copy of '\(name)' for loading.", hint: "Check free space in /tmp.")
        }
        #if os(Linux)
        unlink(tempPath)
        return ("/proc/self/fd/\(fd)", { close(fd) })
        #else
        close(fd)
        return (tempPath, { unlink(tempPath) })
        #endif
    }
}
