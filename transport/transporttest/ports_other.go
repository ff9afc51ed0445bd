//go:build !(linux || freebsd)

package transporttest

import (
	"net"
	"testing"
)

// DeadEndpoint is an HTTP endpoint on loopback where nothing listens: a
// port found free and closed again (here another test's server may take it
// meanwhile; on Linux and FreeBSD the port is held).
func DeadEndpoint(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/mcp"
}

// lateListener is a free loopback port, released at once, and a function
// that listens on it again (here another test's server may take it
// meanwhile; on Linux and FreeBSD the port is held).
func lateListener(t testing.TB) (endpoint string, listen func() (net.Listener, error)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/mcp", func() (net.Listener, error) { return net.Listen("tcp", addr) }
}

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
