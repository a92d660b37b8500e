import ContextProviderKit
import ContextProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request the gallery sent and what the host answered.
package struct GalleryExchange: Sendable {
    /// The method, e.g. `collect/start`.
    package var method: String
    /// The params sent.
    package var params: JSONValue
    /// The result, when the host answered one.
    package var result: JSONValue?
    /// The error, when the host answered one.
    package var error: ResponseError?

    /// `{"method", "params", "result" | "error": {code, message, data?}}`.
    package var json: JSONValue {
        var object: JSONObject = ["method": .string(method), "params": params]
        if let result { object["result"] = result }
        if let error { object["error"] = error.json }
        return .object(object)
    }
}

/// One form step as the gallery walked it.
package struct GalleryStep: Sendable {
    /// The step's form, as the provider sent it.
    package var form: JSONValue
    /// The invalid values submitted first (one rule broken), when a field allows one.
    package var invalidValues: JSONObject?
    /// What that invalid attempt broke, e.g. `required field 'title' left out`.
    package var invalidWhat: String?
    /// The field errors the provider answered for the invalid values.
    package var fieldErrors: [String: String] = [:]
    /// The form-level error the provider answered, if any.
    package var formError: String?
    /// The values the collector accepted for this step.
    package var acceptedValues: JSONObject?
    /// Options `collect/query` found for search-backed choice fields: field id → (query, options).
    package var searches: [String: (query: String, options: [JSONValue])] = [:]

    /// Creates a step.
    package init(
        form: JSONValue, invalidValues: JSONObject? = nil, invalidWhat: String? = nil, fieldErrors: [String: String] = [:],
        formError: String? = nil, acceptedValues: JSONObject? = nil
    ) {
        self.form = form
        self.invalidValues = invalidValues
        self.invalidWhat = invalidWhat
        self.fieldErrors = fieldErrors
        self.formError = formError
        self.acceptedValues = acceptedValues
    }

    /// Strings by key as a JSON object, keys sorted.
    package static func json(_ strings: [String: String]) -> JSONValue {
        var object = JSONObject()
        for (key, value) in strings.sorted(by: { $0.key < $1.key }) { object[key] = .string(value) }
        return .object(object)
    }
}

/// Everything the gallery learned about one provider through the public protocol.
package struct GalleryProvider: Sendable {
    /// The `providers/list` entry.
    package var entry: JSONValue
    /// The form steps walked, in order.
    package var steps: [GalleryStep] = []
    /// The item made (by the form flow or `collect/make`).
    package var item: JSONValue?
    /// `items/preview`'s chip.
    package var chip: JSONValue?
    /// `items/detail`'s document.
    package var detail: JSONValue?
    /// `items/describe`'s text.
    package var description: String?
    /// `items/encode`'s result.
    package var encoding: JSONValue?
    /// What went wrong, in words, in order (provider failures are shown, never fatal).
    package var problems: [String] = []
    /// Every request sent for this provider and its answer.
    package var exchanges: [GalleryExchange] = []

    /// A provider known only by its `providers/list` entry so far.
    package init(entry: JSONValue) {
        self.entry = entry
    }

    /// The provider id (`manifestPath` for a rejected manifest).
    package var id: String { entry["id"]?.stringValue ?? entry["manifestPath"]?.stringValue ?? "unknown" }
    /// The title to show.
    package var title: String { entry["title"]?.stringValue ?? entry["id"]?.stringValue ?? entry["manifestPath"]?.stringValue ?? "?" }
    /// Whether the host lists it as available.
    package var available: Bool { entry["available"]?.boolValue == true }

    /// Why it cannot be used, when it cannot: the host's reason, load error or first diagnostic.
    package var unavailableReason: String? {
        guard !available else { return nil }
        if let reason = entry["unavailableReason"] {
            return (reason["message"]?.stringValue ?? "unavailable") + (reason["code"]?.stringValue.map { " (\($0))" } ?? "")
        }
        if let error = entry["error"] {
            var text = (error["message"]?.stringValue ?? "failed to load") + (error["code"]?.stringValue.map { " (\($0))" } ?? "")
            if let hint = error["hint"]?.stringValue { text += "; fix: " + hint }
            return text
        }
        if let diagnostics = entry["diagnostics"]?.arrayValue, !diagnostics.isEmpty {
            return diagnostics.map { diagnostic in
                let place = [diagnostic["file"]?.stringValue, diagnostic["line"]?.intValue.map(String.init), diagnostic["column"]?.intValue.map(String.init)]
                    .compactMap { $0 }.joined(separator: ":")
                return place + ": " + (diagnostic["message"]?.stringValue ?? "") + (diagnostic["hint"]?.stringValue.map { " (fix: \($0))" } ?? "")
            }.joined(separator: "\n")
        }
        return "status: " + (entry["status"]?.stringValue ?? "unknown")
    }

    /// The raw data, as written to `gallery.json`.
    package var json: JSONValue {
        var object: JSONObject = ["id": .string(id), "entry": entry]
        object["steps"] = .array(steps.map { step in
            var value: JSONObject = ["form": step.form]
            if let invalid = step.invalidValues {
                var attempt: JSONObject = ["values": .object(invalid), "fieldErrors": GalleryStep.json(step.fieldErrors)]
                if let what = step.invalidWhat { attempt["what"] = .string(what) }
                if let formError = step.formError { attempt["formError"] = .string(formError) }
                value["invalidAttempt"] = .object(attempt)
            }
            if let accepted = step.acceptedValues { value["acceptedValues"] = .object(accepted) }
            return .object(value)
        })
        if let item { object["item"] = item }
        if let chip { object["chip"] = chip }
        if let detail { object["detail"] = detail }
        if let description { object["description"] = .string(description) }
        if let encoding { object["encoding"] = encoding }
        object["problems"] = .array(problems.map(JSONValue.string))
        object["exchanges"] = .array(exchanges.map(\.json))
        return .object(object)
    }
}

/// The whole gallery: the host that served it and every provider.
package struct GalleryData: Sendable {
    /// `initialize`'s `serverInfo` (`name`, `version`).
    package var serverInfo: JSONValue
    /// The providers, in `providers/list` order (priority).
    package var providers: [GalleryProvider]
    /// When it was made (UTC, RFC 3339).
    package var generatedAt: String

    /// Creates the data.
    package init(serverInfo: JSONValue, providers: [GalleryProvider], generatedAt: String) {
        self.serverInfo = serverInfo
        self.providers = providers
        self.generatedAt = generatedAt
    }

    /// `{"format":1, "serverInfo", "generatedAt", "providers":[…]}`.
    package var json: JSONValue {
        ["format": 1, "serverInfo": serverInfo, "generatedAt": .string(generatedAt), "providers": .array(providers.map(\.json))]
    }
}

/// Walks every provider of a host through sample flows, speaking only the public protocol
/// (docs/protocol.md), like any client: `providers/list`; for form collectors `collect/start`, one
/// submit with an invalid value when a field allows one (its error is kept), then submits of
/// values derived from the form (`SampleValues`, as the conformance runner derives them) until
/// the collector accepts one, following later steps; `collect/make` for programmatic
/// collectors (or when the form made nothing); then `items/preview`, `items/detail`,
/// `items/describe` and `items/encode` of the item. Provider failures are recorded, never fatal.
package final class GalleryRunner {
    private let host: BlockingHost
    private let grantedPermissions: [String]
    private let providerIDs: [String]
    private let manifestPaths: [String]

    /// At most this many form steps per flow (as the conformance runner).
    static let maximumSteps = 12

    /// `providerIDs` and `manifestPaths` limit the gallery to the providers with those ids or
    /// manifest files (both empty: every provider). An id the host does not list is an error; a
    /// manifest path is compared as a resolved path and may match nothing.
    package init(host: BlockingHost, grantedPermissions: [String] = [], providerIDs: [String] = [], manifestPaths: [String] = []) {
        self.host = host
        self.grantedPermissions = grantedPermissions
        self.providerIDs = providerIDs
        self.manifestPaths = manifestPaths
    }

    /// A `--provider` id the host does not list.
    package struct UnknownProvider: Error, CustomStringConvertible {
        package var ids: [String]
        package var known: [String]
        package var description: String {
            "no provider has id \(ids.map { "'\($0)'" }.joined(separator: ", ")); the host lists: \(known.joined(separator: ", ")) (check --provider and --manifests)"
        }
    }

    /// Initializes the host and walks every provider. Throws only when the host itself fails
    /// (cannot initialize or list), or a requested provider id is unknown.
    package func run(generatedAt: String) throws -> GalleryData {
        let initialized = try host.call(InitializeRequest.method, [
            "clientInfo": ["name": "context-host gallery", "version": "1.0"],
            "protocolVersion": 1, "locale": "en-US",
            "grantedPermissions": .array(grantedPermissions.map(JSONValue.string)),
        ])
        host.notify(ContextProtocol.InitializedNotification.method)
        var entries = try host.call(ProvidersListRequest.method)["providers"]?.arrayValue ?? []
        if !providerIDs.isEmpty || !manifestPaths.isEmpty {
            let known = entries.compactMap { $0["id"]?.stringValue }
            let unknown = providerIDs.filter { !known.contains($0) }
            if !unknown.isEmpty { throw UnknownProvider(ids: unknown, known: known) }
            let files = Set(manifestPaths.map(Self.resolved))
            entries = entries.filter { entry in
                (entry["id"]?.stringValue.map(providerIDs.contains) ?? false)
                    || (entry["manifestPath"]?.stringValue.map { files.contains(Self.resolved($0)) } ?? false)
            }
        }
        let providers = entries.map(walk)
        return GalleryData(serverInfo: initialized["serverInfo"] ?? .null, providers: providers, generatedAt: generatedAt)
    }

    // MARK: One provider

    private func walk(_ entry: JSONValue) -> GalleryProvider {
        var provider = GalleryProvider(entry: entry)
        guard provider.available, let id = entry["id"]?.stringValue else { return provider }
        let collection = entry["collection"]?.stringValue ?? "form"
        if collection != "programmatic" {
            collectWithForm(id, into: &provider)
        }
        if provider.item == nil, collection != "form" {
            if let made = call(CollectMakeRequest.method, ["providerId": .string(id)], into: &provider) {
                if let item = made["item"], !item.isNull {
                    provider.item = item
                } else {
                    provider.problems.append("collect/make made no item (null).")
                }
            }
        }
        guard let item = provider.item else {
            if provider.problems.isEmpty { provider.problems.append("No item was made, so there is no chip, detail or encoding to show.") }
            return provider
        }
        provider.chip = call(ItemsPreviewRequest.method, ["item": item], into: &provider)
        provider.detail = call(ItemsDetailRequest.method, ["item": item], into: &provider)
        provider.description = call(ItemsDescribeRequest.method, ["item": item], into: &provider)?["text"]?.stringValue
        provider.encoding = call(ItemsEncodeRequest.method, ["item": item], into: &provider)
        return provider
    }

    /// Sends a request, records the exchange, and answers the result (nil after an error, which
    /// is added to `problems`).
    private func call(_ method: String, _ params: JSONValue, into provider: inout GalleryProvider) -> JSONValue? {
        do {
            let result = try host.call(method, params)
            provider.exchanges.append(GalleryExchange(method: method, params: params, result: result))
            return result
        } catch {
            provider.exchanges.append(GalleryExchange(method: method, params: params, error: error))
            provider.problems.append("\(method) failed: \(error.message) (\(error.code.rawValue))")
            return nil
        }
    }

    /// The first option each search-backed choice field of `form` offers for one of the sample
    /// queries (`collect/query`), by field id; the query and options shown are kept in `step`.
    private func searchOptions(
        _ form: ContextForm, sessionId: JSONValue, step: inout GalleryStep, into provider: inout GalleryProvider
    ) -> [String: String] {
        var searchOptions: [String: String] = [:]
        for field in form.fields where field.kind == .choice && field.search != nil {
            for query in SampleValues.searchQueries(minimumLength: field.search?.minQueryLength ?? 0) {
                guard let answer = call(CollectQueryRequest.method, [
                    "sessionId": sessionId, "fieldId": .string(field.id), "query": .string(query), "values": [:],
                ], into: &provider) else { break }
                let options = answer["options"]?.arrayValue ?? []
                if let first = options.first?["value"]?.stringValue {
                    searchOptions[field.id] = first
                    step.searches[field.id] = (query, options)
                    break
                }
            }
        }
        return searchOptions
    }

    /// An `invalid` outcome's field and form errors, on one line.
    private static func refusal(_ outcome: JSONValue) -> String {
        let errors = (outcome["fieldErrors"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
            .map { "\($0.key): \($0.value.stringValue ?? $0.value.jsonString)" }
        return (errors + [outcome["formError"]?.stringValue].compactMap { $0 }).joined(separator: "; ")
    }

    private func collectWithForm(_ id: String, into provider: inout GalleryProvider) {
        guard let started = call(CollectStartRequest.method, ["providerId": .string(id)], into: &provider),
              let sessionId = started["sessionId"], var form = started["form"] else { return }
        var finished = false
        defer {
            if !finished { _ = call(CollectCancelRequest.method, ["sessionId": sessionId], into: &provider) }
        }
        for stepIndex in 0..<Self.maximumSteps {
            var step = GalleryStep(form: form)
            defer { provider.steps.append(step) }
            let parsed: ContextForm
            do {
                parsed = try ContextForm(json: form, path: "form")
            } catch {
                provider.problems.append("The form of step \(stepIndex + 1) does not convert: \(error)")
                return
            }
            let options = searchOptions(parsed, sessionId: sessionId, step: &step, into: &provider)
            let candidates = SampleValues.candidates(for: parsed, searchOptions: options)
            // First step: one invalid value a real client could send (right JSON type), to show the error.
            if stepIndex == 0, let valid = candidates.first,
               let invalid = SampleValues.invalid(for: parsed, valid: valid).first(where: { variant in
                   parsed.fields.first { $0.id == variant.fieldID }.map { Self.isNative(variant.values[$0.id], kind: $0.kind) } ?? false
               }) {
                step.invalidValues = invalid.values
                step.invalidWhat = invalid.what
                guard let outcome = call(CollectSubmitRequest.method, ["sessionId": sessionId, "values": .object(invalid.values)], into: &provider) else { return }
                switch outcome["outcome"]?.stringValue {
                case "invalid":
                    step.fieldErrors = [:]
                    for (field, message) in outcome["fieldErrors"]?.objectValue ?? [:] { step.fieldErrors[field] = message.stringValue ?? message.jsonString }
                    step.formError = outcome["formError"]?.stringValue
                    if step.fieldErrors[invalid.fieldID] == nil {
                        provider.problems.append("The invalid submit (\(invalid.what)) got no error for field '\(invalid.fieldID)'.")
                    }
                case "item":
                    provider.problems.append("The collector accepted an invalid value (\(invalid.what)) and made an item.")
                    provider.item = outcome["item"]
                    finished = true
                    return
                default:
                    provider.problems.append("The collector accepted an invalid value (\(invalid.what)) and went on to the next step; the gallery stopped this flow there.")
                    _ = call(CollectCancelRequest.method, ["sessionId": sessionId], into: &provider)
                    finished = true
                    return
                }
            }
            var next: JSONValue?
            var refusals: [String] = []
            for values in candidates {
                guard let outcome = call(CollectSubmitRequest.method, ["sessionId": sessionId, "values": .object(values)], into: &provider) else {
                    if provider.exchanges.last?.error?.code.rawValue == -32020 { finished = true }
                    return
                }
                switch outcome["outcome"]?.stringValue {
                case "item":
                    step.acceptedValues = values
                    provider.item = outcome["item"]
                    finished = true
                    return
                case "step":
                    step.acceptedValues = values
                    next = outcome["form"]
                default:
                    refusals.append(Self.refusal(outcome))
                    continue
                }
                break
            }
            guard let next else {
                provider.problems.append("The collector refused every value set derived from its form (it may need real input, such as a known name); its answers: " + refusals.joined(separator: " | "))
                return
            }
            form = next
        }
        provider.problems.append("The flow had more than \(Self.maximumSteps) steps; the gallery stopped there.")
    }

    /// `path` with symbolic links, `.` and `..` resolved (as is when it does not exist).
    static func resolved(_ path: String) -> String {
        guard let pointer = realpath(path, nil) else { return path }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// Whether a value is what a native control of this kind produces (nil: left empty).
    static func isNative(_ value: JSONValue?, kind: FieldKind) -> Bool {
        guard let value else { return true }
        switch kind {
        case .text, .date, .datetime, .choice: return value.stringValue != nil
        case .number: return value.numberValue != nil
        case .toggle: return value.boolValue != nil
        case .location: return value["latitude"]?.numberValue != nil && value["longitude"]?.numberValue != nil
        }
    }
}
