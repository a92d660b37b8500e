import CContextProvider

/// Exports a `ContextProvider` through the C ABI (`context_provider.h`).
///
/// ```swift
/// @_cdecl("context_provider_entry_v1")
/// public func contextProviderEntry() -> UnsafeRawPointer {
///     ContextProviderExport.entry(for: NoteProvider.self)
/// }
/// ```
///
/// Each provider type gets its own static `ctxp_provider_v1` table, valid for the life of the
/// process. C function pointers cannot capture the generic type, so each library's copy of the
/// SDK keeps a small registry of exported types (up to `maximumProvidersPerLibrary`), one table
/// slot each.
public enum ContextProviderExport {
    /// How many provider types one library can export.
    public static let maximumProvidersPerLibrary = 8

    /// The function table for `type`, as the `context_provider_entry_v1` symbol returns it.
    /// Calling it again for the same type returns the same table.
    public static func entry<P: ContextProvider>(for type: P.Type) -> UnsafeRawPointer {
        UnsafeRawPointer(ExportRegistry.shared.table(for: type))
    }

    /// The function table for `type`, typed.
    public static func table<P: ContextProvider>(for type: P.Type) -> UnsafePointer<ctxp_provider_v1> {
        UnsafePointer(ExportRegistry.shared.table(for: type))
    }
}

/// The C signature of `open`.
typealias OpenFunction = @convention(c) (
    UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UnsafeMutableRawPointer?>?, ctxp_reply_fn?,
    UnsafeMutableRawPointer?
) -> Int32

/// Exported provider types and their tables, per library.
final class ExportRegistry: @unchecked Sendable {
    static let shared = ExportRegistry()

    private typealias Factory = @Sendable (ProviderContext) throws -> ProviderInstanceBase

    private let lock = Lock()
    private var types: [ObjectIdentifier] = []
    private var factories: [Factory] = []
    private var tables: [UnsafeMutablePointer<ctxp_provider_v1>] = []

    /// One `open` per slot: the slot number is the only thing that tells them apart.
    private static let openers: [OpenFunction] = [
        { ExportRegistry.open(slot: 0, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 1, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 2, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 3, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 4, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 5, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 6, $0, $1, $2, $3, $4) },
        { ExportRegistry.open(slot: 7, $0, $1, $2, $3, $4) },
    ]

    func table<P: ContextProvider>(for type: P.Type) -> UnsafeMutablePointer<ctxp_provider_v1> {
        lock.withLock {
            let identifier = ObjectIdentifier(type)
            if let slot = types.firstIndex(of: identifier) { return tables[slot] }
            let slot = types.count
            precondition(
                slot < Self.openers.count,
                "ContextProviderKit: at most \(Self.openers.count) provider types can be exported from one library")
            let table = UnsafeMutablePointer<ctxp_provider_v1>.allocate(capacity: 1)
            table.initialize(
                to: ctxp_provider_v1(
                    abi_version: UInt32(CTXP_ABI_VERSION),
                    struct_size: UInt32(MemoryLayout<ctxp_provider_v1>.size),
                    open: Self.openers[slot],
                    call: { instance, message, length, reply, replyContext in
                        guard let instance else { return }
                        let base = Unmanaged<ProviderInstanceBase>.fromOpaque(instance).takeUnretainedValue()
                        base.receive(UnsafeRawBufferPointer(start: message, count: length), reply: reply, context: replyContext)
                    },
                    close: { instance in
                        guard let instance else { return }
                        Unmanaged<ProviderInstanceBase>.fromOpaque(instance).takeRetainedValue().close()
                    }))
            types.append(identifier)
            factories.append { context in try ProviderInstance<P>(provider: P(context: context), context: context) }
            tables.append(table)
            return table
        }
    }

    private func factory(slot: Int) -> Factory? {
        lock.withLock { slot < factories.count ? factories[slot] : nil }
    }

    static func open(
        slot: Int, _ initJSON: UnsafePointer<UInt8>?, _ length: Int,
        _ outInstance: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ onError: ctxp_reply_fn?,
        _ errorContext: UnsafeMutableRawPointer?
    ) -> Int32 {
        func fail(_ message: String, hint: String) -> Int32 {
            if let onError {
                let bytes = JSONValue.object(["message": .string(message), "hint": .string(hint)]).jsonBytes
                bytes.withUnsafeBufferPointer { onError(errorContext, $0.baseAddress, $0.count) }
            }
            return CTXP_ERROR
        }
        guard let outInstance else {
            return fail("open was called without an instance pointer", hint: "This is a host bug; pass out_instance.")
        }
        guard let factory = shared.factory(slot: slot) else {
            return fail("No provider is registered for this table", hint: "This is an SDK bug.")
        }
        let context: ProviderContext
        do {
            let json = try JSONValue(parsing: UnsafeRawBufferPointer(start: initJSON, count: length))
            context = try ProviderContext(json: json)
        } catch let error as JSONParseError {
            return fail("Invalid init JSON: \(error)", hint: "The host must pass a UTF-8 JSON object (see docs/provider-abi.md).")
        } catch {
            return fail("Invalid init JSON: \(error)", hint: "The host must pass the init object described in docs/provider-abi.md.")
        }
        do {
            let instance = try factory(context)
            outInstance.pointee = Unmanaged.passRetained(instance).toOpaque()
            return CTXP_OK
        } catch let error as ProviderError {
            return fail(error.message, hint: error.hint ?? "Check this provider's settings in the host configuration.")
        } catch {
            return fail(String(describing: error), hint: "Check this provider's settings in the host configuration.")
        }
    }
}
