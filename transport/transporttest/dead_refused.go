//go:build linux || freebsd

package transporttest

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// DeadEndpoint is an HTTP endpoint on loopback where nothing listens, and
// nothing will while the test runs: a connection to it is refused at once.
// Its port is held by a socket that is bound and never listens, without
// SO_REUSEADDR, which a listener of this or another process would need to
// share it. (A port found free and closed again may be taken meanwhile by
// another test's server, which then answers in its place.) Only on Linux
// and FreeBSD, which refuse a connection to a port whose only socket does
// not listen; macOS, OpenBSD and NetBSD drop it, and a call would time out.
func DeadEndpoint(t testing.TB) string {
	t.Helper()
	_, endpoint := boundSocket(t)
	return endpoint
}

// boundSocket is a TCP socket bound to a free loopback port that does not
// listen (connections to it are refused), closed when the test ends, and
// its endpoint.
func boundSocket(t testing.TB) (fd int, endpoint string) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, fmt.Sprintf("http://127.0.0.1:%d/mcp", sa.(*syscall.SockaddrInet4).Port)
}

// lateListener is a port held now, refusing connections, and a function
// that makes it listen: the port is never free in between.
func lateListener(t testing.TB) (endpoint string, listen func() (net.Listener, error)) {
	t.Helper()
	fd, endpoint := boundSocket(t)
	return endpoint, func() (net.Listener, error) {
		if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
			return nil, os.NewSyscallError("listen", err)
		}
		// fd stays the test's, closed at its end; the listener has its own
		// descriptor of the socket (FileListener dups f's, f closes this one).
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, os.NewSyscallError("fcntl", err)
		}
		f := os.NewFile(uintptr(dup), "late listener")
		defer f.Close()
		return net.FileListener(f)
	}
}
