import Foundation

/// A folder that is deleted when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A new folder holding one file, `relativePath` (see `write`).
    public convenience init(writing relativePath: String, _ contents: String) throws {
        try self.init()
        try write(relativePath, contents)
    }

    /// Writes a file (creating folders) and returns its path.
    @discardableResult
    public func write(_ relativePath: String, _ contents: String) throws -> String {
        let file = path + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Manifest text for tests, with every field set and overridable lines.
public enum TestManifest {
    /// A manifest's first lines (no line break after the last): `manifestVersion: 1`, `id`, `title`,
    /// `iconName`, `version` and `library`.
    public static func identity(id: String, title: String, iconName: String = "wrench", version: String = "1.0.0", library: String) -> String {
        """
        manifestVersion: 1
        id: \(id)
        title: \(title)
        iconName: \(iconName)
        version: \(version)
        library: \(library)
        """
    }

    public static func yaml(
        id: String, library: String, isolation: String = "in-process", collection: String = "both",
        extra: String = "", timeouts: String = "{ collect: 30s, preview: 500ms, detail: 2s, encode: 1s }",
        permissions: String = "[]", host: String = ">=0.1.0 <1.0.0", priority: Int = 10,
        maximumAttachmentCount: Int = 2
    ) -> String {
        """
        \(identity(id: id, title: "Test \(id)", library: library))
        priority: \(priority)
        maximumAttachmentCount: \(maximumAttachmentCount)
        collection: \(collection)
        isolation: \(isolation)
        availability:
          platforms: [linux, macos]
          host: "\(host)"
          permissions: \(permissions)
        timeouts: \(timeouts)
        \(extra)
        """
    }

    /// A programmatic provider in a worker that fetches through the host's broker from a loopback
    /// test server on `port` (declared with `privateAddresses: true`); `extra` goes before `network`.
    public static func brokered(
        id: String, title: String, iconName: String, library: String, port: Int, networkTimeout: String, timeouts: String,
        extra: String = ""
    ) -> String {
        """
        \(identity(id: id, title: title, iconName: iconName, version: "0.0.1", library: library))
        collection: programmatic
        isolation: process
        \(extra)network:
          timeout: \(networkTimeout)
          origins:
            - { origin: "https://localhost:\(port)", privateAddresses: true }
        timeouts: \(timeouts)
        """
    }
}
