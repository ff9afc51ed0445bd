package referee

// PlayerAt is the id of the player whose endpoint is endpoint in a match
// the referee holds, as its manager named it, or "" when none is: for the
// referee's metrics, which name a player by the id its league gave it,
// never by an endpoint it chose. A breaker changes during a call of a
// match, which the referee holds then; the scan is rare enough.
func (r *Referee) PlayerAt(endpoint string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.matches {
		switch endpoint {
		case m.a.endpoint:
			return m.a.id
		case m.b.endpoint:
			return m.b.id
		}
	}
	return ""
}
