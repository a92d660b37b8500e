#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The composer's static files, served by `serve --listen` at `/` (docs/web.md, "The composer").
///
/// A fixed table: only the names in `StaticSite.table` are read, each from the web root folder
/// itself (no sub-folders), once, when the listener starts. A request path is looked up in the
/// table and never joined to a file-system path, so `..`, encoded dots or absolute paths cannot
/// reach another file. Each file is opened with `O_NOFOLLOW` relative to the opened root
/// (`openat`): a symbolic link planted in the web root is refused, and so is anything but a
/// regular file, or a file over `maximumFileBytes`. Every answer carries a strict
/// Content-Security-Policy (scripts and styles from the listener only, no inline script),
/// `nosniff` and no CORS header (security.md §12).
package struct StaticSite: Sendable {
    /// One file as served.
    package struct File: Sendable, Equatable {
        package var contentType: String
        package var bytes: [UInt8]

        package init(contentType: String, bytes: [UInt8]) {
            self.contentType = contentType
            self.bytes = bytes
        }
    }

    /// The files read from the web root: name and content type. `index.html` is also `/`.
    package static let table: [(name: String, contentType: String)] = [
        ("index.html", "text/html; charset=utf-8"),
        ("composer.js", "text/javascript; charset=utf-8"),
        ("composer.css", "text/css; charset=utf-8"),
        ("ctxui.js", "text/javascript; charset=utf-8"),
        ("context-host-client.js", "text/javascript; charset=utf-8"),
        ("context-host-protocol.d.ts", "text/plain; charset=utf-8"),
    ]

    /// The largest file read (the composer's files are tens of kilobytes).
    package static let maximumFileBytes = 1 << 20

    /// The Content-Security-Policy of every answer: nothing but the listener's own scripts,
    /// styles and WebSocket, `data:` images (ctxui thumbnails), no inline script or style
    /// elements, no framing, no form posts, no `<base>`.
    package static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// Header fields every static answer carries besides its content type.
    package static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Cache-Control", "no-cache"),
    ]

    /// The files by URL path (`/index.html`, and `/` for it).
    package private(set) var files: [String: File] = [:]
    /// The folder the files were read from (for messages).
    package let root: String

    /// Reads every file of `table` from `root`, plus `extra` files given in memory (URL path →
    /// file; the CLI adds the gallery's stylesheet as `/ctxui.css`).
    package init(root: String, extra: [String: File] = [:]) throws(StaticSiteError) {
        self.root = root
        let directory = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .root(path: root, errno: errno) }
        defer { close(directory) }
        for (name, contentType) in Self.table {
            let bytes = try Self.readFile(name, in: directory, root: root)
            files["/" + name] = File(contentType: contentType, bytes: bytes)
        }
        files["/"] = files["/index.html"]
        for (path, file) in extra { files[path] = file }
    }

    /// The file a request path names, or nil (404). The query string is ignored.
    package func file(forPath path: String) -> File? {
        files[String(path.prefix { $0 != "?" && $0 != "#" })]
    }

    /// The URL paths served (the gate lets them through without a token: they are the
    /// repository's public files and hold no data).
    package var paths: Set<String> { Set(files.keys) }

    /// One regular file of the root, not through a symbolic link, at most `maximumFileBytes`.
    private static func readFile(_ name: String, in directory: Int32, root: String) throws(StaticSiteError) -> [UInt8] {
        let path = root + "/" + name
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            throw code == ELOOP ? .symbolicLink(path: path) : .open(path: path, errno: code)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .open(path: path, errno: errno) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notRegularFile(path: path) }
        guard status.st_size >= 0, status.st_size <= off_t(maximumFileBytes) else {
            throw .tooLarge(path: path, limit: maximumFileBytes)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .open(path: path, errno: errno)
            }
            if count == 0 { break }
            guard bytes.count <= maximumFileBytes - count else { throw .tooLarge(path: path, limit: maximumFileBytes) }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }
}

/// Why the composer's files could not be read.
package enum StaticSiteError: Error, Equatable, CustomStringConvertible {
    case root(path: String, errno: Int32)
    case open(path: String, errno: Int32)
    case symbolicLink(path: String)
    case notRegularFile(path: String)
    case tooLarge(path: String, limit: Int)

    package var description: String {
        switch self {
        case .root(let path, let code):
            "cannot open the web root \(path): \(String(cString: strerror(code))); give the folder with the composer's files (the repository's web/) with --web-root"
        case .open(let path, let code):
            "cannot read \(path): \(String(cString: strerror(code))); the web root must hold every file of the composer (the repository's web/)"
        case .symbolicLink(let path):
            "\(path) is a symbolic link; the web root's files must be regular files (links could point anywhere): copy the file instead"
        case .notRegularFile(let path):
            "\(path) is not a regular file"
        case .tooLarge(let path, let limit):
            "\(path) is larger than \(limit) bytes"
        }
    }
}
