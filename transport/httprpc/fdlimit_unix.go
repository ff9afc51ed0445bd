//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import "syscall"

// openFiles is how many files this process may have open (its soft
// RLIMIT_NOFILE, which Go raises to the hard one when it starts), or 0
// when it cannot tell.
func openFiles() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return uint64(l.Cur)
}
