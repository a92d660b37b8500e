import ContextHost

/// SHA-256 for tests (wraps the host's implementation).
public enum SHA256Digest {
    public static func hex(_ bytes: [UInt8]) -> String { SHA256.hex(of: bytes) }
}
