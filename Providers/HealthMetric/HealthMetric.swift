// HealthMetric provider: being written (see issue).
import ContextProviderKit
