import ContextProviderKit

/// What an app decides about one provider: the same choices a `--config` file's `providers:`
/// entry makes for `context-host` (docs/configuration.md), set in code.
///
/// ```swift
/// configuration.providerOptions["com.contexthost.calendar"] = ProviderOptions(
///     priority: 200, settings: ["calendars": "/home/ada/Calendars", "windowDays": 14])
/// configuration.providerOptions["com.contexthost.stock-quote"] = ProviderOptions(enabled: false)
/// ```
///
/// Settings are checked against the provider's manifest when it loads: an unknown name or a value
/// of the wrong type fails that provider's load (`providers/list` shows the diagnostic), as a
/// configuration file's would. A relative `path` setting is taken from the current directory.
public struct ProviderOptions: Sendable, Hashable {
    /// `false` lists the provider as `disabled` and never loads it; nil: enabled.
    public var enabled: Bool?
    /// Orders the provider (higher first) instead of its manifest's `priority`; nil: the manifest's.
    public var priority: Int?
    /// Values for the settings its manifest declares, by name; the others keep their defaults.
    public var settings: [String: JSONValue]

    public init(enabled: Bool? = nil, priority: Int? = nil, settings: [String: JSONValue] = [:]) {
        self.enabled = enabled
        self.priority = priority
        self.settings = settings
    }
}

extension HostConfiguration {
    /// Where embedder-given options are said to come from, in diagnostics.
    static let providerOptionsSource = "HostConfiguration.providerOptions"

    /// The per-provider choices in force: the configuration file's, with `providerOptions` applied
    /// over them (an app's option wins over the file's for the same provider and field).
    package var providerOverrides: HostConfigFile? {
        guard !providerOptions.isEmpty else { return configFile }
        var merged = configFile ?? HostConfigFile(
            path: Self.providerOptionsSource, directory: ManifestFileSystem.currentDirectory())
        let at = HostConfigFile.Location(line: 0, column: 0)
        for (id, options) in providerOptions.sorted(by: { $0.key < $1.key }) {
            var provider = merged.provider(id) ?? HostConfigFile.ProviderOverride(id: id, location: at)
            if let priority = options.priority { provider.priority = priority }
            if let enabled = options.enabled {
                provider.enabled = enabled
                provider.enabledLocation = at
            }
            for (name, value) in options.settings.sorted(by: { $0.key < $1.key }) {
                provider.settings.removeAll { $0.name == name }
                provider.settings.append(HostConfigFile.SettingOverride(name: name, value: value, keyLocation: at, valueLocation: at))
            }
            if let index = merged.providers.firstIndex(where: { $0.id == id }) {
                merged.providers[index] = provider
            } else {
                merged.providers.append(provider)
            }
        }
        return merged
    }
}
