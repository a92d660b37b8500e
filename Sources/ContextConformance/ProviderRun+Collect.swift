import ContextHost
import ContextProviderKit

/// Shape check of a result, as the host does it (`OutputValidation`); nil when valid.
func shapeProblem(_ value: JSONValue, as kind: ProviderOutput) -> String? {
    do {
        try OutputValidation.validate(value, as: kind)
        return nil
    } catch {
        return "\(error)"
    }
}

extension ProviderRun {
    // MARK: metadata, availability

    func checkMetadata(_ session: ProviderSession) async {
        guard let manifest else { return }
        await check("metadata.matches-manifest") {
            let outcome = await session.call(ProviderInfoRequest.method)
            guard let result = outcome.result else { return .fail("provider/info failed: \(outcome.errorText)") }
            let metadata: ProviderMetadata
            do {
                metadata = try ProviderMetadata(json: result, path: "result")
            } catch {
                return .fail("provider/info answered an invalid result: \(error)", ["fix: answer {\"id\",\"title\",\"version\",\"iconName\",\"ctxui\":1}"])
            }
            var problems: [String] = []
            if metadata.id != manifest.id { problems.append("id: the provider says '\(metadata.id)', the manifest '\(manifest.id)'") }
            if metadata.version != manifest.version.description {
                problems.append("version: the provider says '\(metadata.version)', the manifest '\(manifest.version)'")
            }
            if !problems.isEmpty {
                return .fail(problems.joined(separator: "; ") + ".", ["fix: make ProviderMetadata and the manifest agree (the manifest's id never changes)"])
            }
            var remarks: [String] = []
            let titles = manifest.title.entries.map(\.text)
            if !titles.contains(metadata.title) { remarks.append("title: the provider says '\(metadata.title)', the manifest '\(manifest.title)'") }
            if metadata.iconName != manifest.iconName { remarks.append("iconName: the provider says '\(metadata.iconName)', the manifest '\(manifest.iconName)'") }
            if !remarks.isEmpty { return .warn("id and version match, but " + remarks.joined(separator: "; ") + ".") }
            return .pass("provider/info matches the manifest (\(metadata.id) \(metadata.version)).")
        }
    }

    func checkAvailability(_ session: ProviderSession) async {
        let outcome = await session.call(ProviderAvailabilityRequest.method)
        var verdict: Verdict
        if let result = outcome.result {
            do {
                let availability = try ContextProviderKit.Availability(json: result, path: "result")
                if availability.available {
                    verdict = .pass("Available (answered in \(Self.ms(outcome.elapsed))).")
                } else {
                    verdict = .warn("The provider says it is unavailable: \(availability.reason ?? "(no reason)"). The checks that need it are skipped.")
                    if (availability.reason ?? "").isEmpty {
                        verdict = .fail("The provider says it is unavailable without a reason.", ["fix: give a reason a user can act on (Availability.unavailable(\"…\"))"])
                    }
                    blocked = "skipped: the provider is unavailable (\(availability.reason ?? "no reason"))"
                }
            } catch {
                verdict = .fail("provider/availability answered an invalid result: \(error)")
            }
        } else {
            verdict = .fail("provider/availability failed: \(outcome.errorText)")
        }
        await check("availability.answers") { verdict }
    }

    // MARK: collection

    /// Runs the collect checks and gathers items for the item checks.
    func collectItems(_ session: ProviderSession) async {
        guard let manifest, blocked == nil else { return }
        let usesForm = manifest.collection != .programmatic
        if usesForm {
            await collectWithForm(session)
        } else {
            for id in ["collect.form-valid", "collect.query", "collect.sample-flow", "collect.rejects-invalid", "collect.cancel"] {
                record(id, .skip("not applicable: the manifest says collection: programmatic"), 0)
            }
        }
        await check("collect.make-context", always: true) {
            let outcome = await session.call(ProviderMakeContextRequest.method)
            if manifest.collection == .form {
                if outcome.error?.code.rawValue == -32601 || outcome.result?["item"]?.isNull == true {
                    return .skip("not applicable: the manifest says collection: form")
                }
            }
            guard let result = outcome.result else {
                // A deliberate provider error (its own code, e.g. "no current location is
                // configured") is allowed; an internal error, a missing method, a crash, hang or
                // bad reply is not.
                if let error = outcome.error, !outcome.errorIsFromHost, ![-32603, -32601, -32602].contains(error.code.rawValue) {
                    return .warn("provider/makeContext answered an error instead of {\"item\": null}: \(outcome.errorText)")
                }
                return .fail("provider/makeContext failed: \(outcome.errorText)", ["fix: answer {\"item\": null} when no item can be made, an item otherwise"])
            }
            if let problem = shapeProblem(result, as: .madeItem) { return .fail("provider/makeContext answered an invalid result: \(problem)") }
            guard let item = result["item"], !item.isNull else {
                return .warn("provider/makeContext answered no item (null); programmatic clients get nothing.")
            }
            addItem(item, source: "makeContext")
            return .pass("provider/makeContext made an item.")
        }
        if items.isEmpty, blocked == nil {
            blocked = "skipped: no item to check (the collector made none; declare samples, see docs/conformance.md)"
        }
    }

    func addItem(_ json: JSONValue, source: String) {
        guard items.count < Self.maximumItems else { return }
        items.append(CollectedItem(source: source, json: json, item: try? ContextItem(json: json, path: "item")))
    }

    private func collectWithForm(_ session: ProviderSession) async {
        var formProblems: [String] = []
        // collect/start
        let start = await session.call(ProviderCollectStartRequest.method, ["sessionId": "conformance-start"])
        if let result = start.result {
            if let problem = shapeProblem(result, as: .form) {
                formProblems.append("collect/start: \(problem)")
            } else if let form = try? ContextForm(json: result, path: "form") {
                startForm = form
                formProblems += Self.formRemarks(form, step: ProviderCollectStartRequest.method)
            }
        } else {
            formProblems.append("collect/start failed: \(start.errorText)")
        }
        _ = await session.call(ProviderCollectCancelRequest.method, ["sessionId": "conformance-start"])
        await checkQuery(session)
        let (samples, declared) = await collectorSamples(session)
        // collect.sample-flow
        var flowProblems: [String] = []
        var flowRemarks: [String] = []
        var made = 0
        for (index, sample) in samples.enumerated() {
            let outcome = await walk(session, sample: sample, sessionId: "conformance-sample-\(index)", derive: !declared, formProblems: &formProblems)
            switch outcome {
            case .item(let item):
                if sample.expectsItem {
                    made += 1
                    addItem(item, source: "sample '\(sample.name)'")
                } else {
                    flowProblems.append("sample '\(sample.name)': expected the collector to refuse it, but it made an item")
                }
            case .invalid(let errors):
                if sample.expectsItem {
                    let text = "sample '\(sample.name)': answered invalid: \(errors)"
                    if declared { flowProblems.append(text) } else { flowRemarks.append(text) }
                }
            case .failed(let reason):
                flowProblems.append("sample '\(sample.name)': \(reason)")
            }
        }
        await check("collect.form-valid") {
            if startForm == nil && formProblems.isEmpty { return .fail("collect/start answered no form.") }
            if !formProblems.isEmpty {
                return .fail("\(formProblems.count) problem(s) in the collector's forms.", formProblems + ["fix: see docs/ctxui.schema.json (Form) and docs/conformance.md#collectform-valid"])
            }
            return .pass("collect/start answers a valid form ('\(startForm?.stepId ?? "")', \(startForm?.fields.count ?? 0) field(s)).")
        }
        await check("collect.sample-flow") {
            if samples.isEmpty { return .fail("No sample could run: no valid start form.") }
            if !flowProblems.isEmpty { return .fail("\(flowProblems.count) of \(samples.count) sample(s) failed.", flowProblems) }
            if !flowRemarks.isEmpty {
                return .warn("Values derived from the form were refused; declare samples (CollectorSample) so the runner can walk a real flow.", derivedRefusals.isEmpty ? flowRemarks : derivedRefusals)
            }
            return .pass("\(samples.count) \(declared ? "declared" : "derived") sample(s) walked; \(made) item(s) made.")
        }
        await checkRejectsInvalid(session)
        await checkCancel(session)
    }

    /// `collect.query`: each search-backed choice field of the start form answers valid options.
    private func checkQuery(_ session: ProviderSession) async {
        await check("collect.query", always: true) {
            guard let form = startForm else { return .skip("blocked: no valid start form (collect.form-valid)") }
            let searchFields = form.fields.filter { $0.kind == .choice && $0.search != nil }
            if searchFields.isEmpty { return .skip("not applicable: no choice field with a search source") }
            var problems: [String] = []
            for field in searchFields {
                var found: String?
                for query in SampleValues.searchQueries(minimumLength: field.search?.minQueryLength ?? 0) {
                    let outcome = await session.call(ProviderCollectQueryRequest.method, [
                        "sessionId": "conformance-query", "stepId": .string(form.stepId), "fieldId": .string(field.id),
                        "query": .string(query), "values": [:],
                    ])
                    guard let result = outcome.result else {
                        problems.append("\(field.id) query \"\(query)\": \(outcome.errorText)")
                        break
                    }
                    if let problem = shapeProblem(result, as: .options) {
                        problems.append("\(field.id) query \"\(query)\": \(problem)")
                        break
                    }
                    if let first = result["options"]?.arrayValue?.first?["value"]?.stringValue {
                        found = first
                        break
                    }
                }
                if let found { searchOptions[field.id] = found }
            }
            if !problems.isEmpty { return .fail("collect/query failed for \(problems.count) field(s).", problems) }
            let missing = searchFields.filter { searchOptions[$0.id] == nil }.map(\.id)
            if !missing.isEmpty {
                return .warn("collect/query answered no options for \(missing.joined(separator: ", ")) (tried \(SampleValues.searchQueries(minimumLength: 0).map { "\"\($0)\"" }.joined(separator: ", "))).")
            }
            return .pass("collect/query answered valid options for \(searchFields.map(\.id).joined(separator: ", ")).")
        }
    }

    /// The samples to walk: those the provider declares (`conformance/samples`), or one derived
    /// from the start form (the first candidate the collector accepts); whether they were declared.
    private func collectorSamples(_ session: ProviderSession) async -> (samples: [CollectorSample], declared: Bool) {
        var samples: [CollectorSample] = []
        var declared = false
        let answer = await session.call(ConformanceSamplesRequest.method)
        if let result = answer.result, let list = result["samples"]?.arrayValue {
            declared = true
            for (index, raw) in list.enumerated() {
                if let sample = try? CollectorSample(json: raw, path: "samples[\(index)]") { samples.append(sample) }
            }
        }
        if declared, let first = samples.first(where: \.expectsItem), first.steps.count == 1 {
            acceptedValues = first.steps[0].values
        }
        if !declared, let form = startForm {
            // Candidates in order; the first the collector accepts is the derived sample.
            let candidates = SampleValues.candidates(for: form, searchOptions: searchOptions)
            var refusals: [String] = []
            var chosen: CollectorSample?
            for (index, values) in candidates.enumerated() {
                let candidate = CollectorSample(name: "derived from the form", steps: [CollectorSample.Step(stepId: "", values: values)])
                var ignored: [String] = []
                if case .invalid(let errors) = await walk(session, sample: candidate, sessionId: "conformance-derive-\(index)", derive: true, formProblems: &ignored) {
                    refusals.append("fields \(values.map(\.key).sorted().joined(separator: ", ")): \(errors)")
                    continue
                }
                chosen = candidate
                acceptedValues = values
                break
            }
            samples = [chosen ?? CollectorSample(name: "derived from the form", steps: [CollectorSample.Step(stepId: "", values: candidates.last ?? [:])])]
            if chosen == nil { derivedRefusals = refusals }
        }
        return (samples, declared)
    }

    /// `collect.rejects-invalid`: values that break a rule of the start form are refused with a field error.
    private func checkRejectsInvalid(_ session: ProviderSession) async {
        await check("collect.rejects-invalid") {
            guard let form = startForm else { return .skip("blocked: no valid start form (collect.form-valid)") }
            let valid = SampleValues.valid(for: form, searchOptions: searchOptions)
            let variants = SampleValues.invalid(for: form, valid: valid)
            if variants.isEmpty { return .skip("not applicable: the form has no rule an invalid value can break") }
            var problems: [String] = []
            var remarks: [String] = []
            for (index, variant) in variants.prefix(16).enumerated() {
                let sessionId = JSONValue.string("conformance-invalid-\(index)")
                _ = await session.call(ProviderCollectStartRequest.method, ["sessionId": sessionId])
                let outcome = await session.call(ProviderCollectSubmitRequest.method, ["sessionId": sessionId, "stepId": .string(form.stepId), "values": .object(variant.values)])
                _ = await session.call(ProviderCollectCancelRequest.method, ["sessionId": sessionId])
                if let error = outcome.error {
                    if error.code.rawValue == -32602 {
                        remarks.append("\(variant.what): answered error -32602 instead of an 'invalid' outcome")
                    } else {
                        problems.append("\(variant.what): \(outcome.errorText)")
                    }
                    continue
                }
                guard let result = outcome.result else { continue }
                switch result["outcome"]?.stringValue {
                case "invalid":
                    if result["fieldErrors"]?[variant.fieldID]?.stringValue == nil {
                        remarks.append("\(variant.what): answered invalid, but fieldErrors does not name '\(variant.fieldID)'")
                    }
                case let other:
                    problems.append("\(variant.what): answered '\(other ?? "?")' instead of 'invalid'")
                }
            }
            if !problems.isEmpty {
                return .fail("\(problems.count) of \(min(variants.count, 16)) invalid input(s) were not refused.", problems + ["fix: validate values against the form (the SDK does it when form(forStep:) returns the step's form) and answer .invalid(fieldErrors:)"])
            }
            if !remarks.isEmpty { return .warn("Invalid input was refused, but not as clients expect.", remarks) }
            return .pass("\(min(variants.count, 16)) invalid input(s) refused with a field error each.")
        }
    }

    /// `collect.cancel`: a started session can be cancelled.
    private func checkCancel(_ session: ProviderSession) async {
        await check("collect.cancel") {
            _ = await session.call(ProviderCollectStartRequest.method, ["sessionId": "conformance-cancel"])
            let outcome = await session.call(ProviderCollectCancelRequest.method, ["sessionId": "conformance-cancel"])
            if outcome.result != nil { return .pass("collect/cancel answered.") }
            return .fail("collect/cancel failed: \(outcome.errorText)", ["fix: answer {} (the SDK's default cancelCollection does)"])
        }
    }

    enum WalkOutcome {
        case item(JSONValue)
        case invalid(String)
        case failed(String)
    }

    /// Starts a session and submits each step of `sample` (deriving values for steps it lacks when
    /// `derive`), following `step` outcomes.
    private func walk(_ session: ProviderSession, sample: CollectorSample, sessionId: String, derive: Bool, formProblems: inout [String]) async -> WalkOutcome {
        let start = await session.call(ProviderCollectStartRequest.method, ["sessionId": .string(sessionId)])
        guard let first = start.result, let firstForm = try? ContextForm(json: first, path: "form") else {
            return .failed("collect/start: \(start.errorText)")
        }
        var form = firstForm
        var stepIndex = 0
        for _ in 0..<12 {
            let values: JSONObject
            if stepIndex < sample.steps.count {
                let expected = sample.steps[stepIndex].stepId
                if !expected.isEmpty, expected != form.stepId {
                    _ = await session.call(ProviderCollectCancelRequest.method, ["sessionId": .string(sessionId)])
                    return .failed("the sample's step \(stepIndex + 1) is for '\(expected)', but the collector shows '\(form.stepId)'")
                }
                values = sample.steps[stepIndex].values
            } else if derive {
                values = SampleValues.valid(for: form, searchOptions: [:])
            } else {
                _ = await session.call(ProviderCollectCancelRequest.method, ["sessionId": .string(sessionId)])
                return .failed("the collector asked for step '\(form.stepId)' after the sample's \(sample.steps.count) step(s)")
            }
            stepIndex += 1
            let outcome = await session.call(ProviderCollectSubmitRequest.method, ["sessionId": .string(sessionId), "stepId": .string(form.stepId), "values": .object(values)])
            guard let result = outcome.result else { return .failed("collect/submit (step '\(form.stepId)'): \(outcome.errorText)") }
            if let problem = shapeProblem(result, as: .submitOutcome) {
                if result["outcome"]?.stringValue == "step" {
                    formProblems.append("step after '\(form.stepId)': \(problem)")
                } else if result["outcome"]?.stringValue != "item" {
                    return .failed("collect/submit answered an invalid outcome: \(problem)")
                }
                if result["outcome"]?.stringValue == "step" { return .failed("the next step's form is invalid: \(problem)") }
            }
            switch result["outcome"]?.stringValue {
            case "item":
                return .item(result["item"] ?? .null)
            case "step":
                guard let next = result["form"], let nextForm = try? ContextForm(json: next, path: "form") else {
                    return .failed("a step outcome without a valid form")
                }
                formProblems += Self.formRemarks(nextForm, step: "step '\(nextForm.stepId)'")
                form = nextForm
            case "invalid":
                var parts: [String] = []
                if let errors = result["fieldErrors"]?.objectValue {
                    for (key, value) in errors { parts.append("\(key): \(value.stringValue ?? "")") }
                }
                if let formError = result["formError"]?.stringValue { parts.append(formError) }
                _ = await session.call(ProviderCollectCancelRequest.method, ["sessionId": .string(sessionId)])
                return .invalid(parts.joined(separator: "; "))
            default:
                return .failed("collect/submit answered outcome '\(result["outcome"]?.stringValue ?? "?")'")
            }
        }
        return .failed("more than 12 steps")
    }

    /// Problems with a form beyond its shape: default values that fail their own field's rules.
    static func formRemarks(_ form: ContextForm, step: String) -> [String] {
        var problems: [String] = []
        for field in form.fields {
            if let value = field.defaultValue, !value.isNull, let message = field.validate(value) {
                problems.append("\(step): field '\(field.id)' has a default its own rules refuse: \(message)")
            }
            if field.kind == .choice, field.search == nil, (field.options ?? []).isEmpty {
                problems.append("\(step): choice field '\(field.id)' has neither options nor a search source")
            }
        }
        if form.fallbackText.isEmpty { problems.append("\(step): fallbackText is empty") }
        return problems
    }

    /// Queries tried for a search field, shortest first.
    static func ms(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return value < 10 ? String(format1: value) + " ms" : "\(Int(value.rounded())) ms"
    }
}

extension String {
    /// `value` with one decimal.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
