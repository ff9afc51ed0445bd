//go:build unix

package transporttest

import (
	"fmt"
	"syscall"
	"testing"
)

// DeadEndpoint is an HTTP endpoint on loopback where nothing listens, and
// nothing will while the test runs: a connection to it is refused at once.
// Its port is held by a socket that is bound and never listens, without
// SO_REUSEADDR, which a listener of this or another process would need to
// share it. (A port found free and closed again may be taken meanwhile by
// another test's server, which then answers in its place.)
func DeadEndpoint(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", sa.(*syscall.SockaddrInet4).Port)
}
