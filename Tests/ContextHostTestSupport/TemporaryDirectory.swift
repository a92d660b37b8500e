import Foundation

/// A folder that is deleted when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
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
    public static func yaml(
        id: String, library: String, isolation: String = "in-process", collection: String = "both",
        extra: String = "", timeouts: String = "{ collect: 30s, preview: 500ms, detail: 2s, encode: 1s }",
        permissions: String = "[]", host: String = ">=0.1.0 <1.0.0", priority: Int = 10,
        maximumAttachmentCount: Int = 2
    ) -> String {
        """
        manifestVersion: 1
        id: \(id)
        title: Test \(id)
        iconName: wrench
        version: 1.0.0
        library: \(library)
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
}
