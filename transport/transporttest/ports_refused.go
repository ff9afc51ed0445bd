//go:build linux || freebsd

package transporttest

import (
	"fmt"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// The ports of dead, late and stopped endpoints are held here, on Linux
// and FreeBSD only: they refuse a connection to a port whose only socket
// does not listen, where macOS, OpenBSD and NetBSD drop it, and a call
// would time out where a test expects it refused. (A port found free and
// closed again may be taken meanwhile by another test's server, which then
// answers in its place.)

// DeadEndpoint is an HTTP endpoint on loopback where nothing listens, and
// nothing will while the test runs: a connection to it is refused at once.
// Its port is held by a socket that is bound and never listens, without
// SO_REUSEADDR, which a listener of this or another process would need to
// share it.
func DeadEndpoint(t testing.TB) string {
	t.Helper()
	_, port := boundSocket(t, false)
	return endpointOf(port)
}

// lateListener is a port held now, refusing connections, and a function
// that makes it listen: the port is never free in between.
func lateListener(t testing.TB) (endpoint string, listen func() (net.Listener, error)) {
	t.Helper()
	fd, port := boundSocket(t, false)
	return endpointOf(port), func() (net.Listener, error) {
		if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
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

// heldListener listens on a free loopback port that stays held, refusing
// connections, from when it is closed until the test ends, so that a test
// that stops a server (an agent that crashed) never finds another test's
// server answering in its place. Two sockets share the port with
// SO_REUSEPORT: the listener's, and one that is bound and never listens,
// closed at the end of the test. A listener of this or another process
// that does not set SO_REUSEPORT (net.Listen does not) cannot take the
// port while the second is bound. The listener's socket is the listener's
// alone: a descriptor of it kept elsewhere would keep it listening, and
// connections would wait unanswered instead of being refused.
func heldListener(t testing.TB) net.Listener {
	t.Helper()
	_, port := boundSocket(t, true)
	fd := newSocket(t, true)
	f := os.NewFile(uintptr(fd), fmt.Sprintf("held listener on port %d", port))
	defer f.Close() // FileListener has its own descriptor of the socket
	if err := unix.Bind(fd, loopback(port)); err != nil {
		t.Fatal(os.NewSyscallError("bind", err))
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		t.Fatal(os.NewSyscallError("listen", err))
	}
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// boundSocket is a TCP socket bound to a free loopback port that does not
// listen (connections to it are refused), closed when the test ends, and
// its port.
func boundSocket(t testing.TB, reusePort bool) (fd, port int) {
	t.Helper()
	fd = newSocket(t, reusePort)
	t.Cleanup(func() { _ = unix.Close(fd) })
	if err := unix.Bind(fd, loopback(0)); err != nil {
		t.Fatal(os.NewSyscallError("bind", err))
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(os.NewSyscallError("getsockname", err))
	}
	return fd, sa.(*unix.SockaddrInet4).Port
}

// newSocket is a new TCP socket, closed on exec, with SO_REUSEPORT set if
// reusePort.
func newSocket(t testing.TB, reusePort bool) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(os.NewSyscallError("socket", err))
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			_ = unix.Close(fd)
			t.Fatal(os.NewSyscallError("setsockopt", err))
		}
	}
	return fd
}

func loopback(port int) *unix.SockaddrInet4 {
	return &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}
}

func endpointOf(port int) string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", port) }
