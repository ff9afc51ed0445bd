package check

// WithFirstRound pins the first round of a run's match ids, which are
// otherwise fresh for each run: for tests that name them.
func WithFirstRound(o Options, n int) Options {
	o.firstRound = n
	return o
}
