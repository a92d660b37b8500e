/// Sample input for a provider's collector, used by the conformance runner
/// (`context-host conformance`, docs/conformance.md) to walk real collection flows.
///
/// Declare samples with `ContextProvider.conformanceSamples`; the SDK answers them to the
/// `conformance/samples` request. Without samples the runner derives values from the form itself,
/// which cannot guess values a provider only accepts from its data (a real place, a known symbol).
///
/// ```swift
/// public static var conformanceSamples: [CollectorSample] {
///     [CollectorSample(name: "groceries", values: ["title": "Groceries", "body": "- milk"])]
/// }
/// ```
public struct CollectorSample: JSONConvertible, Hashable {
    /// The values submitted for one step of the collector.
    public struct Step: Sendable, Hashable {
        /// The step the values are for (a `ContextForm.stepId`).
        public var stepId: String
        /// Field id → value, in the wire form of each field kind (docs/provider-abi.md).
        public var values: JSONObject

        /// Creates a step.
        public init(stepId: String, values: JSONObject) {
            self.stepId = stepId
            self.values = values
        }
    }

    /// A short name shown in conformance reports, e.g. `"groceries"`.
    public var name: String
    /// The steps in order. An empty `stepId` means "whatever step the collector shows now".
    public var steps: [Step]
    /// Whether the flow ends with an item (`true`, the default) or the last step must be answered
    /// `invalid` (a sample of input the collector has to refuse).
    public var expectsItem: Bool

    /// A sample of several steps.
    public init(name: String, steps: [Step], expectsItem: Bool = true) {
        self.name = name
        self.steps = steps
        self.expectsItem = expectsItem
    }

    /// A one-step sample: `values` are submitted for the first step.
    public init(name: String, values: JSONObject, expectsItem: Bool = true) {
        self.init(name: name, steps: [Step(stepId: "", values: values)], expectsItem: expectsItem)
    }

    /// Converts `{"name","steps":[{"stepId"?,"values"}],"expectsItem"?}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        name = try reader.string("name")
        guard let rawSteps = reader.value("steps")?.arrayValue else {
            throw JSONDecodeError.missing(at: reader.path("steps"), expected: "an array of steps")
        }
        var steps: [Step] = []
        for (index, raw) in rawSteps.enumerated() {
            let stepReader = try JSONObjectReader(raw, path: JSONDecodeError.join(reader.path("steps"), index: index))
            steps.append(Step(
                stepId: try stepReader.optionalString("stepId") ?? "",
                values: try stepReader.object("values").object))
        }
        self.steps = steps
        expectsItem = try reader.optionalBool("expectsItem") ?? true
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["name"] = .string(name)
        object["steps"] = .array(steps.map { step in
            var entry = JSONObject()
            if !step.stepId.isEmpty { entry["stepId"] = .string(step.stepId) }
            entry["values"] = .object(step.values)
            return .object(entry)
        })
        object["expectsItem"] = .bool(expectsItem)
        return .object(object)
    }
}
