import ContextHost
import ContextProviderKit

extension ProviderRun {
    /// `{"item": …}` params.
    static func itemParams(_ item: JSONValue) -> JSONValue { ["item": item] }

    // MARK: item.provider-id, chip, detail, describe, encode

    func itemChecks(_ session: ProviderSession) async {
        guard let manifest else { return }
        await checkProviderIds(manifest)
        await check("chip.schema", always: true) {
            await viewCheck(session, method: ItemPreviewRequest.method, kind: .chip) { index, value in self.chips[index] = value }
        }
        await check("detail.schema") {
            await viewCheck(session, method: ItemDetailRequest.method, kind: .detail) { _, _ in }
        }
        await check("describe.text") {
            var problems: [String] = []
            for collected in items {
                let outcome = await session.call(ItemDescribeRequest.method, Self.itemParams(collected.json))
                guard let result = outcome.result else {
                    problems.append("\(collected.source): \(outcome.errorText)")
                    continue
                }
                if let problem = shapeProblem(result, as: .description) {
                    problems.append("\(collected.source): \(problem)")
                } else if (result["text"]?.stringValue ?? "").allSatisfy(\.isWhitespace) {
                    problems.append("\(collected.source): the text is empty")
                }
            }
            if !problems.isEmpty { return .fail("item/describe failed for \(problems.count) item(s).", problems) }
            return .pass("item/describe answered a text for \(items.count) item(s).")
        }
        await checkRepresentations(session)
        await check("encode.deterministic", always: true) {
            var problems: [String] = []
            for (index, collected) in items.enumerated() {
                guard let first = encodings[index] else { continue }
                let again = await session.call(ItemEncodeRequest.method, Self.itemParams(collected.json))
                guard let second = again.result else {
                    problems.append("\(collected.source): the second encode failed: \(again.errorText)")
                    continue
                }
                if second != first {
                    problems.append("\(collected.source): \(Self.difference(first, second))")
                    // Later checks compare encodings; this one already reports the difference.
                    encodings[index] = nil
                }
            }
            if !problems.isEmpty {
                return .fail("Encoding the same item twice gave different bytes.", problems + ["fix: encode from the item alone: no clock, random numbers or dictionary order in the output"])
            }
            return .pass("Encodings of \(encodings.count) item(s) are identical when repeated.")
        }
    }

    /// `item.provider-id`: every item is valid and carries the provider's id, a unique UUID, a type, a name and content.
    private func checkProviderIds(_ manifest: Manifest) async {
        await check("item.provider-id") {
            var problems: [String] = []
            var ids = Set<String>()
            for collected in items {
                let json = collected.json
                guard let item = collected.item else {
                    do {
                        _ = try ContextItem(json: json, path: "item")
                    } catch {
                        problems.append("\(collected.source): not a valid item: \(error)")
                    }
                    continue
                }
                if item.providerId != manifest.id {
                    problems.append("\(collected.source): providerId is '\(item.providerId)', not '\(manifest.id)'")
                }
                if !Self.isUUID(item.id) { problems.append("\(collected.source): id '\(item.id)' is not a UUID") }
                if !ids.insert(item.id).inserted { problems.append("\(collected.source): id '\(item.id)' was already used by another item") }
                if item.type.isEmpty { problems.append("\(collected.source): type is empty") }
                if item.displayName.isEmpty { problems.append("\(collected.source): displayName is empty") }
                if json["content"] == nil { problems.append("\(collected.source): content is missing") }
            }
            if !problems.isEmpty {
                return .fail("\(problems.count) problem(s) in \(items.count) item(s).", problems + ["fix: make items with context.makeItem(type:displayName:content:), which stamps the id and provider"])
            }
            return .pass("\(items.count) item(s) carry '\(manifest.id)', unique UUIDs, a type, a display name and content.")
        }
    }

    /// `encode.declared-representation`: the default encoding and each representation asked for match.
    private func checkRepresentations(_ session: ProviderSession) async {
        await check("encode.declared-representation", always: true) {
            var problems: [String] = []
            var supported: Set<String> = []
            for (index, collected) in items.enumerated() {
                let outcome = await session.call(ItemEncodeRequest.method, Self.itemParams(collected.json))
                guard let result = outcome.result else {
                    problems.append("\(collected.source), default representation: \(outcome.errorText)")
                    continue
                }
                if let problem = Self.encodingProblem(result, asked: nil) {
                    problems.append("\(collected.source), default representation: \(problem)")
                    continue
                }
                encodings[index] = result
                for representation in EncodingRepresentation.allCases.map(\.rawValue) {
                    let asked = await session.call(ItemEncodeRequest.method, ["item": collected.json, "representation": .string(representation)])
                    if let error = asked.error {
                        if error.code.rawValue != -32602 {
                            problems.append("\(collected.source), '\(representation)': expected the encoding or error -32602 naming the allowed values, got \(asked.errorText)")
                        }
                        continue
                    }
                    guard let value = asked.result else { continue }
                    if let problem = Self.encodingProblem(value, asked: representation) {
                        problems.append("\(collected.source), '\(representation)': \(problem)")
                    } else {
                        supported.insert(representation)
                    }
                }
            }
            if !problems.isEmpty {
                return .fail("\(problems.count) encoding problem(s).", problems + ["fix: answer the representation asked for, or throw ProviderError.unknownRepresentation(…) (-32602)"])
            }
            return .pass("Every encoding matches its representation (supported: \(supported.sorted().joined(separator: ", "))).")
        }
    }

    /// Calls `method` for every item and checks the result's shape.
    private func viewCheck(
        _ session: ProviderSession, method: String, kind: ProviderOutput, keep: (Int, JSONValue) -> Void
    ) async -> Verdict {
        var problems: [String] = []
        for (index, collected) in items.enumerated() {
            let outcome = await session.call(method, Self.itemParams(collected.json))
            guard let result = outcome.result else {
                problems.append("\(collected.source): \(outcome.errorText)")
                continue
            }
            if let problem = shapeProblem(result, as: kind) {
                problems.append("\(collected.source): \(problem)")
                continue
            }
            if (result["fallbackText"]?.stringValue ?? "").allSatisfy(\.isWhitespace) {
                problems.append("\(collected.source): fallbackText is empty")
                continue
            }
            keep(index, result)
        }
        if !problems.isEmpty {
            return .fail("\(method) answered \(problems.count) invalid \(kind.noun)(s).", problems + ["fix: see docs/ctxui.schema.json (\(kind.noun)); the host refuses these with -32014"])
        }
        return .pass("\(method) answered a valid \(kind.noun) for each of \(items.count) item(s).")
    }

    /// What is wrong with an encoding, or nil.
    static func encodingProblem(_ value: JSONValue, asked: String?) -> String? {
        if let problem = shapeProblem(value, as: .encodedItem) { return problem }
        guard let encoded = try? EncodedItem(json: value, path: "encoding") else { return "not an encoding" }
        if let asked, encoded.representation.rawValue != asked {
            return "asked for '\(asked)', answered '\(encoded.representation.rawValue)'"
        }
        let contentType = encoded.contentType.lowercased()
        switch encoded.representation {
        case .json:
            if (try? JSONValue(parsing: encoded.data)) == nil { return "representation 'json', but data is not JSON" }
            if !contentType.contains("json") { return "representation 'json', but contentType is '\(encoded.contentType)'" }
        case .text:
            if String(validating: encoded.data, as: UTF8.self) == nil { return "representation 'text', but data is not UTF-8" }
            if !contentType.hasPrefix("text/") { return "representation 'text', but contentType is '\(encoded.contentType)'" }
        case .binary:
            if contentType.isEmpty { return "representation 'binary' without a contentType" }
        }
        return nil
    }

    /// The first difference between two encodings, in words.
    static func difference(_ a: JSONValue, _ b: JSONValue) -> String {
        for key in ["representation", "contentType", "data", "metadata"] where a[key] != b[key] {
            return "'\(key)' differs: \(String((a[key]?.jsonString ?? "nothing").prefix(80))) vs \(String((b[key]?.jsonString ?? "nothing").prefix(80)))"
        }
        return "the encodings differ"
    }

    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !((byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)) {
                return false
            }
        }
        return true
    }

    // MARK: item.survives-restart

    func restartCheck(_ session: ProviderSession) async {
        await check("item.survives-restart") {
            let fresh: ProviderSession
            switch await session.reopen(options: options) {
            case .success(let opened): fresh = opened
            case .failure(let error): return .fail("A second instance did not open: [\(error.code)] \(error.message)")
            }
            var problems: [String] = []
            for (index, collected) in items.enumerated() {
                let chip = await fresh.call(ItemPreviewRequest.method, Self.itemParams(collected.json), record: false)
                if let result = chip.result {
                    if let before = chips[index], result["title"] != before["title"] || result["subtitle"] != before["subtitle"] {
                        problems.append("\(collected.source): the chip changed: \(before["title"]?.jsonString ?? "") → \(result["title"]?.jsonString ?? "")")
                    }
                } else {
                    problems.append("\(collected.source): item/preview: \(chip.errorText)")
                }
                let detail = await fresh.call(ItemDetailRequest.method, Self.itemParams(collected.json), record: false)
                if detail.result == nil { problems.append("\(collected.source): item/detail: \(detail.errorText)") }
                let encoded = await fresh.call(ItemEncodeRequest.method, Self.itemParams(collected.json), record: false)
                if let result = encoded.result {
                    if let before = encodings[index], before != result {
                        problems.append("\(collected.source): the encoding changed: \(Self.difference(before, result))")
                    }
                } else {
                    problems.append("\(collected.source): item/encode: \(encoded.errorText)")
                }
            }
            let what = mode == .worker ? "a new worker process" : "a new instance"
            if !problems.isEmpty {
                return .fail("\(what.prefix(1).uppercased() + what.dropFirst()) could not serve items made before.", problems + ["fix: keep everything a view needs in the item's content; providers must be stateless"])
            }
            return .pass("\(what.prefix(1).uppercased() + what.dropFirst()) served \(items.count) old item(s) with the same chip and encoding.")
        }
    }

    // MARK: timing

    func timingChecks(_ session: ProviderSession) async {
        guard let manifest else { return }
        for (id, method, timeout) in [
            ("timing.preview", ItemPreviewRequest.method, manifest.timeouts.preview),
            ("timing.detail", ItemDetailRequest.method, manifest.timeouts.detail),
            ("timing.encode", ItemEncodeRequest.method, manifest.timeouts.encode),
        ] {
            await check(id) {
                let budgetMs = Double(timeout.milliseconds) * options.timingBudgetFraction
                let count = max(options.timingSamples, 1)
                // p95 is over budget as soon as this many calls are.
                let allowedOver = count - Int((Double(count) * 0.95).rounded(.up))
                var times: [Double] = []
                var over = 0
                var errors: [String] = []
                for index in 0..<count {
                    let collected = items[index % items.count]
                    let outcome = await session.call(method, Self.itemParams(collected.json), record: false)
                    let elapsed = Double(outcome.elapsed.components.seconds) * 1000 + Double(outcome.elapsed.components.attoseconds) / 1e15
                    times.append(elapsed)
                    if outcome.error != nil { errors.append("\(collected.source): \(outcome.errorText)") }
                    if elapsed > budgetMs { over += 1 }
                    if over > allowedOver || errors.count > 2 { break }
                }
                let sorted = times.sorted()
                let p50 = sorted[sorted.count / 2]
                let p95 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.95).rounded(.up)) - 1)]
                let stats = "p50 \(String(format1: p50)) ms, p95 \(String(format1: p95)) ms, max \(String(format1: sorted.last ?? 0)) ms over \(times.count) call(s); budget \(String(format1: budgetMs)) ms (\(Int(options.timingBudgetFraction * 100))% of the manifest's \(timeout.manifestText))"
                if !errors.isEmpty { return .fail("\(method) failed while timed.", errors) }
                if over > allowedOver {
                    return .fail("\(method) is too slow: \(stats).", ["fix: make \(method) faster (load data lazily and cache it), or raise timeouts.\(method.dropFirst(5)) in the manifest"])
                }
                return .pass(stats + ".")
            }
        }
    }

    // MARK: concurrency

    func concurrencyCheck(_ session: ProviderSession) async {
        await check("concurrency.parallel-calls") {
            let count = max(options.parallelCalls, 2)
            let jobs: [(Int, String)] = (0..<count).map { ($0 % items.count, $0 % 2 == 0 ? ItemPreviewRequest.method : ItemEncodeRequest.method) }
            let itemsJSON = items.map(\.json)
            let outcomes = await withTaskGroup(of: (Int, CallOutcome).self) { group in
                for (job, (index, method)) in jobs.enumerated() {
                    group.addTask { (job, await session.call(method, Self.itemParams(itemsJSON[index]), record: false)) }
                }
                var collected: [Int: CallOutcome] = [:]
                for await (job, outcome) in group { collected[job] = outcome }
                return collected
            }
            var problems: [String] = []
            for (job, (index, method)) in jobs.enumerated() {
                guard let outcome = outcomes[job] else { continue }
                guard let result = outcome.result else {
                    problems.append("call \(job) (\(method) of \(items[index].source)): \(outcome.errorText)")
                    continue
                }
                if method == ItemPreviewRequest.method, let before = chips[index],
                    result["title"] != before["title"] || result["subtitle"] != before["subtitle"]
                {
                    problems.append("call \(job) (item/preview of \(items[index].source)): got the chip \(result["title"]?.jsonString ?? "?"), expected \(before["title"]?.jsonString ?? "?")")
                }
                if method == ItemEncodeRequest.method, let before = encodings[index], before != result {
                    problems.append("call \(job) (item/encode of \(items[index].source)): \(Self.difference(before, result))")
                }
            }
            if !problems.isEmpty {
                return .fail("\(problems.count) of \(count) parallel call(s) went wrong.", Array(problems.prefix(8)) + ["fix: methods run concurrently; do not keep per-call state in shared variables (use locals, or protect shared state)"])
            }
            return .pass("\(count) parallel previews and encodes of \(items.count) item(s) each got the right answer.")
        }
    }
}
