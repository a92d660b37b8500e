// The C headers the C scaffold vendors, embedded so the `context-host` binary is self-contained.
// There is one copy of each: New/Headers/ holds links to Sources/CContextProvider/include/
// context_provider.h and Providers/DeviceInfo/ctxp_json.h, and SwiftPM embeds their bytes at build
// time (`.embedInCode` in Package.swift, `PackageResources`). ScaffoldTests checks the written copies.

extension ScaffoldTemplates {
    /// `context_provider.h`, the ABI header.
    static let contextProviderHeader = String(decoding: PackageResources.context_provider_h, as: UTF8.self)

    /// `ctxp_json.h`, the small JSON reader/writer C providers may copy.
    static let jsonHelperHeader = String(decoding: PackageResources.ctxp_json_h, as: UTF8.self)
}
