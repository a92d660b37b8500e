import ContextHost
import ContextProtocol

/// One collection through a provider's form, driven by a tool's arguments and, where they do not
/// suffice, by elicitation: the same state machine serves a handshake client (the bridge asks with
/// `elicitation/create` and waits) and a 2026-07-28 client (the bridge answers `input_required`
/// and resumes when the call is retried).
///
/// A call whose arguments fill the form finishes without asking. Otherwise it asks for the step
/// with what is known as defaults; a rejected submit asks again with each field's error; a search
/// field's text is resolved with `collect/query` (one match is used, several are offered as a
/// titled single-select, none fails with near matches); later steps take matching arguments too.
actor CollectionRun {
    /// What the run needs next.
    enum Next: Sendable {
        /// The item: the collection is over.
        case finished(ContextItem)
        /// Ask the user: an elicitation's message and `requestedSchema`.
        case ask(message: String, schema: JSONValue)
        /// Over without an item: what to tell the model (a tool error).
        case failed(String)
    }

    /// What the last `ask` asked for.
    private enum Pending {
        case nothing
        /// The current step (with the errors shown).
        case step
        /// Which of several matches a search field's text meant.
        case pick(FormField, [FormOption])
    }

    /// The most steps one collection may take (a provider that never finishes is stopped).
    static let maximumSteps = 32
    /// The most matches offered in one pick.
    static let maximumPicks = 10

    let host: InProcessHost
    let providerID: String
    let arguments: JSONObject
    let progressToken: ProgressToken?
    private var sessionID: String?
    private var form: ContextForm?
    private var values = JSONObject()
    /// Search fields whose value is an option's value (not text still to resolve).
    private var resolved: Set<String> = []
    private var pending = Pending.nothing
    private var steps = 0
    /// The field errors of the last `ask`.
    private var lastErrors: [String: String] = [:]
    /// Whether the user answered the current step: then what they gave is submitted as it is,
    /// and the provider says what is wrong (missing fields are asked for before that).
    private var answeredStep = false

    init(host: InProcessHost, providerID: String, arguments: JSONObject, progressToken: ProgressToken?) {
        self.host = host
        self.providerID = providerID
        self.arguments = arguments
        self.progressToken = progressToken
    }

    /// Opens the session and goes as far as the arguments allow.
    func start() async -> Next {
        do throws(ResponseError) {
            let started = try await host.startCollection(providerId: providerID, progressToken: progressToken)
            sessionID = started.sessionId
            enter(started.form)
            return try await proceed()
        } catch {
            return await fail(error)
        }
    }

    /// Goes on with the user's answer to the last `ask`: `accept` with its content, or `decline`
    /// / `cancel`, which end the collection.
    func answer(action: String, content: JSONObject) async -> Next {
        guard action == "accept" else {
            await cancel()
            return .failed(action == "decline" ? "The user declined to fill in the form; nothing was collected." : "The user cancelled; nothing was collected.")
        }
        guard let form else { return .failed("This collection is over.") }
        switch pending {
        case .nothing:
            return .failed("Nothing was asked.")
        case .step:
            let answered = FormMapping.values(fromElicited: content, form: form)
            for field in form.fields {
                let old = values[field.id]
                values[field.id] = answered[field.id]
                if old != answered[field.id] { resolved.remove(field.id) }
            }
            answeredStep = true
        case .pick(let field, let options):
            guard let chosen = content[field.id]?.stringValue, options.contains(where: { $0.value == chosen }) else {
                // Not one of the matches offered: ask for the step again.
                pending = .step
                return ask(errors: [field.id: "Pick one of the matches offered."])
            }
            values[field.id] = .string(chosen)
            resolved.insert(field.id)
        }
        do throws(ResponseError) {
            return try await proceed()
        } catch {
            return await fail(error)
        }
    }

    /// Closes the host's session, if open (the call was cancelled, declined or failed).
    func cancel() async {
        guard let sessionID else { return }
        self.sessionID = nil
        await Self.closeSession(sessionID, on: host)
    }

    /// Sends `collect/cancel` from a task of its own: when the client cancelled the call, the
    /// request's task is cancelled, and a request sent from it would be refused before it left
    /// (the session would stay open, counting against the host's 64).
    static func closeSession(_ sessionID: String, on host: InProcessHost) async {
        await Task.detached { _ = try? await host.cancelCollection(sessionId: sessionID) }.value
    }

    // MARK: Steps

    private func enter(_ next: ContextForm) {
        form = next
        values = FormMapping.values(fromArguments: arguments, form: next)
        resolved = []
        pending = .nothing
        answeredStep = false
    }

    private func proceed() async throws(ResponseError) -> Next {
        while let form, let sessionID {
            steps += 1
            guard steps <= Self.maximumSteps else {
                await cancel()
                return .failed("Provider \(providerID) did not finish within \(Self.maximumSteps) steps; stopped.")
            }
            // Search fields: text becomes an option's value.
            for field in form.fields where field.kind == .choice && field.search != nil && !resolved.contains(field.id) {
                guard case .string(let text)? = values[field.id] else { continue }
                let options = try await host.query(sessionId: sessionID, fieldId: field.id, query: text, values: values, progressToken: progressToken)
                let folded = text.lowercased()
                let exact = options.filter { $0.value == text || $0.label.lowercased() == folded }
                if options.count == 1 || exact.count == 1 {
                    values[field.id] = .string((exact.count == 1 ? exact[0] : options[0]).value)
                    resolved.insert(field.id)
                    continue
                }
                if options.isEmpty {
                    let near = try await nearMatches(field, text: text, sessionID: sessionID)
                    await cancel()
                    return .failed(
                        "No \(field.label.lowercased()) matches “\(text)”."
                            + (near.isEmpty ? "" : " Near matches: " + near.map { "\($0.label) (\($0.value))" }.joined(separator: ", ") + ".")
                            + " Call again with one of them as \(field.id).")
                }
                pending = .pick(field, Array(options.prefix(Self.maximumPicks)))
                return .ask(
                    message: "Several \(field.label.lowercased()) entries match “\(text)”: which one?",
                    schema: FormMapping.pickSchema(field, options: Array(options.prefix(Self.maximumPicks)), query: text))
            }
            // Ask for what is missing before submitting.
            let missing = FormMapping.missing(form, values: values)
            if !missing.isEmpty, !answeredStep {
                pending = .step
                return ask(errors: [:], missing: missing)
            }
            var submitted = values
            for field in form.fields where submitted[field.id] == nil {
                if let value = field.defaultValue { submitted[field.id] = value }
            }
            let result = try await host.submit(sessionId: sessionID, values: submitted, progressToken: progressToken)
            switch result.outcome {
            case .item(let item):
                self.sessionID = nil
                return .finished(item)
            case .step(let next):
                enter(next)
            case .invalid(let fieldErrors, let formError):
                pending = .step
                return ask(errors: fieldErrors, formError: formError)
            }
        }
        return .failed("This collection is over.")
    }

    private func ask(errors: [String: String], formError: String? = nil, missing: [FormField] = []) -> Next {
        guard let form else { return .failed("This collection is over.") }
        lastErrors = errors
        var message = form.title
        if let formError { message += ": " + formError } else if !errors.isEmpty {
            message += ": please correct " + form.fields.filter { errors[$0.id] != nil }.map(\.label).joined(separator: ", ") + "."
        } else if !missing.isEmpty {
            message += ": please fill in " + missing.map(\.label).joined(separator: ", ") + "."
        }
        for field in form.fields {
            if let error = errors[field.id] { message += "\n• \(field.label): \(error)" }
        }
        return .ask(message: message, schema: FormMapping.elicitationSchema(form, values: values, errors: errors))
    }

    /// Options for shorter and shorter prefixes of `text`, until some match (at most three tries).
    private func nearMatches(_ field: FormField, text: String, sessionID: String) async throws(ResponseError) -> [FormOption] {
        let minimum = max(1, field.search?.minQueryLength ?? 1)
        var prefix = text
        for _ in 0..<3 {
            prefix = String(prefix.dropLast(max(1, prefix.count / 4)))
            guard prefix.count >= minimum else { break }
            let options = try await host.query(sessionId: sessionID, fieldId: field.id, query: prefix, values: values, progressToken: progressToken)
            if !options.isEmpty { return Array(options.prefix(5)) }
        }
        return []
    }

    private func fail(_ error: ResponseError) async -> Next {
        await cancel()
        return .failed(Self.message(error, providerID: providerID))
    }

    /// A host error as a tool error's text (host codes are not passed to MCP clients).
    static func message(_ error: ResponseError, providerID: String) -> String {
        if error.code == .requestCancelled { return "Cancelled." }
        return error.message
    }

    /// What is missing or wrong, for a client that cannot be asked: the step's fields and rules.
    func describeForModel() -> String {
        guard let form else { return "" }
        if case .pick(let field, let options) = pending {
            return "Several matches for \(field.id) (\(field.label)); call the tool again with \(field.id) set to one of: "
                + options.map { "\($0.value) (\($0.label))" }.joined(separator: ", ") + "."
        }
        let missing = Set(FormMapping.missing(form, values: values).map(\.id))
        return "\(form.title) needs input that was not given in the arguments"
            + (missing.isEmpty ? "" : " (missing: " + missing.sorted().joined(separator: ", ") + ")")
            + ". Call the tool again with these arguments:\n" + FormMapping.rules(form, errors: lastErrors)
    }
}
