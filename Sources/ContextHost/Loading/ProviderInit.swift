import ContextProviderKit

/// The init JSON a provider instance is opened with is the SDK's `ProviderContext`: one wire type,
/// written by the registry, the conformance runner, the install probe and the test harness, and
/// read by the SDK (docs/provider-abi.md "Init JSON").
extension ProviderContext {
    /// The context the host opens `providerID` with (`dataDirectory` is added by
    /// `ProviderLauncher.open`, which makes the folder).
    package init(
        providerID: String, settings: JSONObject, locale: String = "en-US", grantedPermissions: some Sequence<String> = [String](),
        ui: UICapabilities = .everything
    ) {
        self.init(
            providerId: providerID, hostVersion: HostConfiguration.hostVersion, locale: locale, settings: ProviderSettings(settings),
            grantedPermissions: Set(grantedPermissions))
        self.ui = ui
    }

    /// The init JSON's bytes.
    package var initBytes: [UInt8] { json.jsonBytes }
}
