package webhookdb

// HoldPromotions takes every turn of the promotions in flight, as that
// many promotions running would, until the returned function is called.
func (s *Store) HoldPromotions() (release func()) {
	for range maxPromotions {
		s.promoting <- struct{}{}
	}
	return func() {
		for range maxPromotions {
			<-s.promoting
		}
	}
}

// OnPromote calls fn before each promotion of s makes its i-th delivery
// available; an error from fn fails the promotion there.
func (s *Store) OnPromote(fn func(i int) error) { s.promoted = fn }

// PromoteChunk is promoteChunk.
const PromoteChunk = promoteChunk
