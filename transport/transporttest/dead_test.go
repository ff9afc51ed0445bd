package transporttest_test

import (
	"errors"
	"net"
	"net/url"
	"runtime"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestDeadEndpoint: a connection to the dead endpoint is refused, and on
// Unix no listener can take its port while the test runs.
func TestDeadEndpoint(t *testing.T) {
	is := is.New(t)
	u, err := url.Parse(transporttest.DeadEndpoint(t))
	is.NoErr(err)
	is.Equal(u.Hostname(), "127.0.0.1")
	_, err = net.Dial("tcp", u.Host)
	is.True(errors.Is(err, syscall.ECONNREFUSED)) // refused at once
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		return
	}
	ln, err := net.Listen("tcp", u.Host) // as any server of any test would
	if err == nil {
		ln.Close()
	}
	is.True(err != nil) // the port is held
}
