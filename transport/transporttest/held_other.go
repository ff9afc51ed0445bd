//go:build !(linux || freebsd)

package transporttest

import (
	"net"
	"testing"
)

// heldListener listens on a free loopback port. Here, unlike on Linux and
// FreeBSD, the port is released when the listener is closed, and another
// test's server may take it meanwhile.
func heldListener(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
