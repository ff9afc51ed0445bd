//go:build linux || freebsd

package transporttest

import (
	"fmt"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// heldListener listens on a free loopback port that stays held, refusing
// connections, from when it is closed until the test ends, so that a test
// that stops a server (an agent that crashed) never finds another test's
// server answering in its place. Two sockets share the port with
// SO_REUSEPORT: the listener's, and one that is bound and never listens,
// closed at the end of the test. A listener of this or another process
// that does not set SO_REUSEPORT (net.Listen does not) cannot take the
// port while the second is bound. Only on Linux and FreeBSD: there a
// connection to a port whose only socket does not listen is refused;
// macOS, OpenBSD and NetBSD drop it instead, so a call would time out
// where a test expects it refused.
func heldListener(t testing.TB) net.Listener {
	t.Helper()
	holder := reusePortSocket(t)
	t.Cleanup(func() { _ = unix.Close(holder) })
	if err := unix.Bind(holder, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(os.NewSyscallError("bind", err))
	}
	sa, err := unix.Getsockname(holder)
	if err != nil {
		t.Fatal(os.NewSyscallError("getsockname", err))
	}
	port := sa.(*unix.SockaddrInet4).Port
	fd := reusePortSocket(t)
	f := os.NewFile(uintptr(fd), fmt.Sprintf("held listener on port %d", port))
	defer f.Close() // FileListener has its own descriptor of the socket
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}); err != nil {
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

// reusePortSocket is a new TCP socket with SO_REUSEPORT set.
func reusePortSocket(t testing.TB) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(os.NewSyscallError("socket", err))
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		_ = unix.Close(fd)
		t.Fatal(os.NewSyscallError("setsockopt", err))
	}
	return fd
}
