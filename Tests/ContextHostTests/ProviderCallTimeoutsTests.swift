import ContextProviderKit
import Logging
import Testing

@testable import ContextHost

/// `CallTimeouts`: a provider's timeouts as its calls' deadlines take them, converted from the
/// manifest's durations when its registry entry changes (not per request), and capped by the
/// host's `maximumCallTimeout`, converted once by the registry.
@Suite("Provider call timeouts")
struct ProviderCallTimeoutsTests {
    @Test("whole milliseconds, rounded up; each method takes its own; capped by the host's maximum")
    func convertedAndCapped() {
        let timeouts = CallTimeouts(Timeouts(collect: .seconds(30), preview: .microseconds(1500), detail: .seconds(2), encode: .seconds(1)))
        #expect([timeouts.collect, timeouts.preview, timeouts.detail, timeouts.encode] == [30_000, 2, 2_000, 1_000])
        #expect(Host.timeout(for: ItemPreviewRequest.method, in: timeouts) == 2)
        #expect(Host.timeout(for: ItemDetailRequest.method, in: timeouts) == 2_000)
        #expect(Host.timeout(for: ItemEncodeRequest.method, in: timeouts) == 1_000)
        #expect(Host.timeout(for: "collect/start", in: timeouts) == 30_000)
        let capped = timeouts.capped(at: 1_500)
        #expect([capped.collect, capped.preview, capped.detail, capped.encode] == [1_500, 2, 1_500, 1_000])
    }

    @Test("the registry's cap is the configuration's maximum call timeout, in milliseconds")
    func registryCap() {
        var configuration = HostConfiguration()
        configuration.isolation.maximumCallTimeout = .milliseconds(100)
        let host = Host(configuration: configuration, logger: Logger(label: "test"))
        #expect(host.registry.maximumCallMilliseconds == 100)
        configuration.isolation.maximumCallTimeout = .seconds(1_000_000)
        #expect(Host(configuration: configuration, logger: Logger(label: "test")).registry.maximumCallMilliseconds == 300_000)
    }

    @Test("durations a damaged cache could hold neither trap nor go past 0 … Timeouts.maximum")
    func hostileDurations() {
        let huge = Duration(secondsComponent: .max, attosecondsComponent: 0)
        let negative = Duration(secondsComponent: .min, attosecondsComponent: 0)
        let timeouts = CallTimeouts(Timeouts(collect: huge, preview: negative, detail: .zero, encode: Timeouts.maximum))
        #expect([timeouts.collect, timeouts.preview, timeouts.detail, timeouts.encode] == [300_000, 0, 0, 300_000])
    }
}
