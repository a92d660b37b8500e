import ContextProviderKit

extension ProviderEntry {
    /// The priority providers are ordered by: the host configuration's, else the manifest's.
    package var effectivePriority: Int { priorityOverride ?? manifest?.priority ?? 0 }

    /// Applies the host configuration file to a freshly discovered entry: its `priority` override
    /// and `enabled: false` (status `disabled`, never loaded). Settings are applied when loading.
    package mutating func applyHostConfiguration(_ configFile: HostConfigFile?) {
        guard let configFile, let id = manifest?.id, let provider = configFile.provider(id) else { return }
        priorityOverride = provider.priority
        if let reason = configFile.disabledReason(for: id), case .discovered(let manifest) = state {
            state = .disabled(manifest)
            unavailability = reason
        }
    }
}

extension ProviderRegistry {
    /// Warnings about the configuration file against this catalog (ids no manifest declares).
    static func configurationWarnings(_ configuration: HostConfiguration, _ catalog: ManifestCatalog) -> [String] {
        guard let configFile = configuration.providerOverrides else { return [] }
        let ids = Set(catalog.entries.compactMap(\.id))
        return configFile.unknownProviderWarnings(knownIDs: ids).map(HostConfigFile.warningText)
    }
}
