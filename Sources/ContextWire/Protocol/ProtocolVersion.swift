/// The client protocol's versions (docs/protocol.md, `initialize`).
///
/// Version 2 is version 1 plus `$/progress`, `log/message`, `log/setLevel`, the `logLevel` and
/// `capabilities.ui` params of `initialize`, and version negotiation itself. A host answers the
/// highest version both sides speak; under version 1 it sends no `$/progress` or `log/message`.
public enum ProtocolVersion {
    /// The newest version: what a client that names no version gets.
    public static let current = 2
    /// Every version this package speaks, oldest first.
    public static let supported: [Int] = [1, 2]

    /// The highest version in both `supported` and `requested`, or nil when they share none.
    public static func negotiate(_ requested: [Int], supported: [Int] = ProtocolVersion.supported) -> Int? {
        supported.filter(requested.contains).max()
    }
}
