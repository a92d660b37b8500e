import ContextProviderKit

/// Random identifiers (UUID version 4 text), without Foundation.
package enum Identifier {
    /// A new random UUID string, e.g. `1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b` (the SDK's
    /// `ItemIdentity.newUUID()`).
    package static func uuid() -> String { ItemIdentity.newUUID() }
}
