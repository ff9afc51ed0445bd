//go:build !unix

package cmd

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
