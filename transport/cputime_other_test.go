//go:build !unix

package transport_test

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
