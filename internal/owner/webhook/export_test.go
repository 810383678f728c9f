package webhook

// What the external tests (package webhook_test, which runs the service on
// webhooktest's fake) reach inside the package.

// SetEgress replaces the service's egress policy.
func (s *Service) SetEgress(f EgressCheckFunc) { s.egress = f }

// SetMaxEndpoints replaces the service's endpoint limit.
func (s *Service) SetMaxEndpoints(n int) { s.maxEndpoints = n }

// SetHealth replaces the service's health reader.
func (s *Service) SetHealth(h HealthReader) { s.health = h }

var (
	FinishDelivery      = finishDelivery
	OutcomeOf           = outcomeOf
	ParseEndpointCursor = parseEndpointCursor
	EndpointCursorOf    = endpointCursor
)

type TestEventData = testEventData
