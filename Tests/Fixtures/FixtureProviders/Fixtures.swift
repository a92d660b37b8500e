#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit

/// A provider that misbehaves on request, for host tests (id `com.contexthost.fixture`).
///
/// Settings:
/// - `failOpen: String` — `init` throws with that reason, so `open` fails.
/// - `unavailableReason: String` — `provider/availability` answers unavailable with that reason.
/// - `openDelayMs: Int` — `init` sleeps that long first (a provider that is slow to load).
///
/// Item content selects what `item/preview`, `item/detail`, `item/describe` and `item/encode` do:
/// - `{"delayMs": N}` — sleep N ms (cancellable), then answer.
/// - `{"hang": true}` — never answer until cancelled.
/// - `{"print": "text"}` — write the text to stdout (to prove the host redirects fd 1), then answer.
/// - `{"fail": "message", "code"?: N}` — throw `ProviderError(code: N ?? -32099, message:)`.
/// - `{"crash": true}` — abort the process (for process-isolation tests only).
/// - `{"fatal": "message"}` — `fatalError(message)` (for process-isolation tests only).
/// - `{"log": true}` — log one line at each level (`context.log`: error, warning, info, debug).
/// - `{"invalidView": true}` — `item/preview` answers a chip whose thumbnail is not a `data:` URI and
///   `item/detail` a map block whose link is not a `geo:` URI (the host must refuse both).
///
/// The collector has one step `fixture` with one required text field `text`; submit makes an
/// item of type `fixture` whose content is `{"text": …}`. The text `wrong-provider-id` makes an item
/// that names another provider (the host must refuse it); the text `hang` never answers until
/// cancelled; the text `progress` reports `$/progress` 1, 2 and 3 of 3, 80 ms apart, first.
public struct FixtureProvider: ContextProvider {
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.fixture", title: "Fixture", version: "0.0.1", iconName: "wrench")

    /// The default error code of `{"fail": …}`.
    public static let failCode = -32099

    let context: ProviderContext

    public init(context: ProviderContext) throws {
        if let delay = context.settings.int("openDelayMs"), delay > 0 { usleep(useconds_t(delay) * 1000) }
        if let reason = context.settings.string("failOpen") {
            throw ProviderError(reason, hint: "Remove the failOpen setting.")
        }
        self.context = context
    }

    public func availability() async throws -> Availability {
        if let reason = context.settings.string("unavailableReason") { return .unavailable(reason) }
        return .available
    }

    public func makeContext() async throws -> ContextItem? {
        context.makeItem(type: "fixture", displayName: "Fixture item", content: ["text": "made"])
    }

    // MARK: Collector

    static let form = ContextForm(
        stepId: "fixture", title: "Fixture", submitLabel: "Attach",
        fields: [.text(id: "text", label: "Text", required: true, maxLength: 100)])

    public func startCollection(sessionId: String) async throws -> ContextForm { Self.form }

    public func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues)
        async throws -> [FormOption]
    {
        [FormOption(value: query, label: "Echo: \(query)")]
    }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        let text = values.string("text") ?? ""
        if text == "invalid" { return .invalid(fieldErrors: ["text": "Text must not be \u{201C}invalid\u{201D}."]) }
        if text == "hang" {
            while true { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
        }
        if text == "progress" {
            for done in 1...3 {
                context.reportProgress(done: Double(done), total: 3, message: "step \(done) of 3")
                try await Task.sleep(nanoseconds: 80_000_000)
            }
        }
        if text == "wrong-provider-id" {
            var item = context.makeItem(type: "fixture", displayName: text, content: ["text": .string(text)])
            item.providerId = "com.example.someone-else"
            return .item(item)
        }
        return .item(context.makeItem(type: "fixture", displayName: text, content: ["text": .string(text)]))
    }

    // MARK: Items

    /// Applies the behaviour the item's content asks for.
    func behave(_ item: ContextItem) async throws {
        let content = item.content
        if content["log"]?.boolValue == true {
            for level in [LogLevel.error, .warning, .info, .debug] { context.log(level, "fixture \(level.rawValue) line") }
        }
        if content["crash"]?.boolValue == true { abort() }
        if let message = content["fatal"]?.stringValue { fatalError(message) }
        if let text = content["print"]?.stringValue {
            print(text)
            fflush(nil)  // all C streams, including stdout
        }
        if let message = content["fail"]?.stringValue {
            throw ProviderError(code: content["code"]?.intValue ?? Self.failCode, message: message)
        }
        if let delay = content["delayMs"]?.intValue, delay > 0 {
            try await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000)
        }
        if content["hang"]?.boolValue == true {
            while true { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
        }
    }

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        try await behave(item)
        if item.content["invalidView"]?.boolValue == true {
            return ContextChip(icon: Self.metadata.iconName, title: item.displayName, thumbnail: "https://example.com/chip.png")
        }
        return ContextChip(icon: Self.metadata.iconName, title: item.displayName, subtitle: "fixture")
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        try await behave(item)
        if item.content["invalidView"]?.boolValue == true {
            let map = MapBlock(center: Coordinate(latitude: 52.5, longitude: 13.4), link: "https://maps.example.com/?q=52.5,13.4")
            return ContextDetail(title: item.displayName, blocks: [.text("Where"), .map(map)])
        }
        return ContextDetail(title: item.displayName, blocks: [.text(item.content.jsonString, style: .monospace)])
    }

    public func describe(_ item: ContextItem) async throws -> String {
        try await behave(item)
        return "Fixture \(item.displayName)"
    }

    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        try await behave(item)
        guard representation == nil || representation == "json" else {
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json"])
        }
        return .json(item.content, metadata: ["fixture": "true"])
    }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: FixtureProvider.self)
}
