import ContextHost
import ContextProviderKit

extension ProviderRun {
    /// An item of this provider to vary: the first collected one, else a plain one.
    var baseItem: JSONValue {
        if let first = items.first?.json { return first }
        return [
            "id": "6f1c1d3e-8a2b-4c5d-9e0f-1a2b3c4d5e6f", "providerId": .string(manifest?.id ?? ""), "type": "conformance",
            "displayName": "Conformance", "content": [:],
        ]
    }

    /// `item` with `key` replaced.
    static func replacing(_ item: JSONValue, _ key: String, with value: JSONValue) -> JSONValue {
        guard var object = item.objectValue else { return item }
        object[key] = value
        return .object(object)
    }

    // MARK: robustness.garbage-input

    func garbageCheck(_ session: ProviderSession) async {
        await check("robustness.garbage-input") {
            let item = baseItem
            let variants: [(String, JSONValue)] = [
                ("no item", [:]),
                ("item is a number", ["item": 42]),
                ("item without content", ["item": Self.replacing(item, "content", with: .null)]),
                ("content is a string", ["item": Self.replacing(item, "content", with: "garbage \u{0}\u{FFFD}")]),
                ("content is an empty object", ["item": Self.replacing(item, "content", with: [:])]),
                ("content of unexpected shape", ["item": Self.replacing(item, "content", with: ["unexpected": [1, ["deep": [true, .null]]], "title": 7])]),
                ("displayName is a number", ["item": Self.replacing(item, "displayName", with: 5)]),
            ]
            var problems: [String] = []
            var calls = 0
            for method in [ItemPreviewRequest.method, ItemDetailRequest.method, ItemDescribeRequest.method, ItemEncodeRequest.method] {
                for (what, params) in variants {
                    calls += 1
                    let outcome = await session.call(method, params, record: false)
                    if let error = outcome.error {
                        if outcome.isFatal { problems.append("\(method), \(what): \(outcome.errorText)") }
                        _ = error
                    } else if let result = outcome.result, let kind = ProviderOutput.expected(for: method),
                        let problem = shapeProblem(result, as: kind)
                    {
                        problems.append("\(method), \(what): answered an invalid \(kind.noun): \(problem)")
                    }
                    // One crash or hang is proof enough (and each costs a restart or a timeout).
                    if session.crashed || problems.count >= 2 { break }
                }
                if session.crashed || problems.count >= 2 { break }
            }
            var remarks: [String] = []
            let unknown = await session.call("conformance/no-such-method", [:], record: false)
            if unknown.isFatal || unknown.result != nil {
                problems.append("an unknown method: expected error -32601, got \(unknown.result != nil ? "a result" : unknown.errorText)")
            } else if let code = unknown.error?.code.rawValue, code != -32601 {
                remarks.append("an unknown method answered error \(code); -32601 is expected")
            }
            // Still alive and unchanged?
            if !items.isEmpty {
                let after = await session.call(ItemPreviewRequest.method, Self.itemParams(items[0].json), record: false)
                if after.result == nil {
                    problems.append("after the malformed calls, a valid item/preview failed: \(after.errorText)")
                } else if let before = chips[0], after.result?["title"] != before["title"] {
                    problems.append("after the malformed calls, the chip of a valid item changed")
                }
            }
            if !problems.isEmpty {
                return .fail("\(problems.count) malformed call(s) were not answered with an error.", problems + ["fix: read item content defensively (JSONObjectReader throws -32602 with the path) and never force-unwrap it"])
            }
            if !remarks.isEmpty { return .warn("Malformed calls were answered, with remarks.", remarks) }
            return .pass("\(calls + 1) malformed call(s) answered with errors; the provider kept working.")
        }
    }

    // MARK: limits.respects-maximum

    func limitsCheck(_ session: ProviderSession) async {
        await check("limits.respects-maximum") {
            var problems = session.oversizedResults
            var remarks: [String] = []
            var made = false
            if let form = startForm, blocked == nil {
                let values = SampleValues.maximum(for: form, searchOptions: searchOptions, base: acceptedValues)
                let sessionId = JSONValue.string("conformance-maximum")
                _ = await session.call(ProviderCollectStartRequest.method, ["sessionId": sessionId])
                var current = form
                var submitted = values
                for _ in 0..<8 {
                    let outcome = await session.call(ProviderCollectSubmitRequest.method, ["sessionId": sessionId, "stepId": .string(current.stepId), "values": .object(submitted)])
                    guard let result = outcome.result else {
                        if outcome.isFatal { problems.append("collect/submit with every field at its maximum: \(outcome.errorText)") }
                        else { remarks.append("collect/submit with every field at its maximum: \(outcome.errorText)") }
                        break
                    }
                    if result["outcome"]?.stringValue == "step", let next = result["form"], let nextForm = try? ContextForm(json: next, path: "form") {
                        current = nextForm
                        submitted = SampleValues.maximum(for: nextForm, searchOptions: [:])
                        continue
                    }
                    if result["outcome"]?.stringValue == "item", let item = result["item"] {
                        made = true
                        for method in [ItemPreviewRequest.method, ItemDetailRequest.method, ItemDescribeRequest.method, ItemEncodeRequest.method] {
                            let view = await session.call(method, Self.itemParams(item), record: false)
                            if let error = view.error {
                                problems.append("\(method) of the maximal item: error \(error.code.rawValue): \(error.message)")
                            }
                        }
                        problems = session.oversizedResults
                    } else if result["outcome"]?.stringValue == "invalid" {
                        remarks.append("the collector refused values at the form's maximums: \(result["fieldErrors"]?.jsonString ?? "")")
                    }
                    break
                }
                _ = await session.call(ProviderCollectCancelRequest.method, ["sessionId": sessionId], record: false)
            }
            if !problems.isEmpty {
                return .fail("\(problems.count) result(s) broke the host's limits.", problems + ["fix: bound what a view shows (shorten text, cap list and chart sizes) so the largest input the form allows still fits; the host refuses larger results with -32014"])
            }
            if !remarks.isEmpty { return .warn("Every result was within the host's limits, but no item could be made at the form's maximums.", remarks) }
            return .pass(made ? "Every result fit the host's limits, also for an item made at the form's maximums." : "Every result fit the host's limits.")
        }
    }

    // MARK: robustness.stdout-clean

    func stdoutCheck(_ session: ProviderSession) async {
        guard let manifest else { return }
        await check("robustness.stdout-clean") {
            let calls = session.recordedCalls
            let executable = ProviderSession.hostExecutable(options: options, libraryPath: session.libraryPath)
            return await probeCache.verdict(manifestPath: manifestPath) {
                guard let executable else {
                    return .skip("skipped: the context-host executable was not found (set ConformanceOptions.hostExecutable)")
                }
                let initJSON: [UInt8]
                do throws(LoadError) {
                    initJSON = try ProviderSession.context(for: manifest, overrides: options.settings[manifest.id] ?? [:]).initBytes
                } catch {
                    return .skip("skipped: \(error.message)")
                }
                let libraryPath = session.libraryPath
                let sha256 = manifest.sha256
                return await offPool {
                    StdoutProbe.run(
                        executable: executable, libraryPath: libraryPath, sha256: sha256, initJSON: initJSON,
                        calls: calls, timeoutMs: 30_000)
                }
            }
        }
    }
}
