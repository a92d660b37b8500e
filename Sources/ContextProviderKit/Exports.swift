// The ctxui value types, JSON and the protocol's wire types live in ContextProtocol; a provider
// that imports ContextProviderKit sees them as before.
@_exported import ContextWire
