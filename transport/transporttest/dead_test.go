package transporttest_test

import (
	"errors"
	"net"
	"net/url"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestDeadEndpoint: a connection to the dead endpoint is refused, and on
// Linux and FreeBSD no listener can take its port while the test runs.
func TestDeadEndpoint(t *testing.T) {
	is := is.New(t)
	u, err := url.Parse(transporttest.DeadEndpoint(t))
	is.NoErr(err)
	is.Equal(u.Hostname(), "127.0.0.1")
	if !holdsPorts() {
		return
	}
	_, err = net.Dial("tcp", u.Host)
	is.True(errors.Is(err, syscall.ECONNREFUSED)) // refused at once
	is.True(!listens(u.Host))                     // the port is held
}

// TestLate: a late endpoint is down until served, as an agent that is not
// up yet (E016 through a Client), then answers at the same endpoint; on
// Linux and FreeBSD its port cannot be taken by another listener in
// between.
func TestLate(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, serve := n.Late(t, "late")
		c := n.Client(time.Second)
		say := map[string]string{"say": "hi"}
		err := c.Call(t.Context(), ep, "echo", say, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // down: E016
		if n.Name == "http" && holdsPorts() {
			u, err := url.Parse(ep)
			is.NoErr(err)
			is.True(!listens(u.Host)) // the port is held
		}
		serve(transporttest.EchoMux())
		var got struct {
			Said string `json:"said"`
		}
		is.NoErr(c.Call(t.Context(), ep, "echo", say, &got)) // up, where it was
		is.Equal(got.Said, "hi")
	})
}

// TestListenStoppableHoldsItsPort: a stopped listener's endpoint is down
// (refused on HTTP: E016 through a Client) until the test ends, and on
// Linux and FreeBSD no other listener can take its port meanwhile.
func TestListenStoppableHoldsItsPort(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		c := n.Client(time.Second)
		say := map[string]string{"say": "hi"}

		// Stopped before it served: no connection of its own (in
		// TIME_WAIT) keeps a listener out, only the held port.
		l := n.ListenStoppable(t, "never-served", transporttest.EchoMux())
		is.NoErr(l.Close())
		if u, err := url.Parse(l.Endpoint()); n.Name == "http" && holdsPorts() {
			is.NoErr(err)
			_, err = net.Dial("tcp", u.Host)
			is.True(errors.Is(err, syscall.ECONNREFUSED)) // refused at once
			is.True(!listens(u.Host))                     // the port is held
		}
		err := c.Call(t.Context(), l.Endpoint(), "echo", say, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // down: E016

		// Stopped after it served (a crash mid-league).
		l = n.ListenStoppable(t, "served", transporttest.EchoMux())
		is.NoErr(c.Call(t.Context(), l.Endpoint(), "echo", say, nil)) // up
		is.NoErr(l.Close())
		err = c.Call(t.Context(), l.Endpoint(), "echo", say, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // down
	})
}

// holdsPorts reports whether transporttest holds the ports of dead and
// stopped endpoints on this system (ports_refused.go).
func holdsPorts() bool { return runtime.GOOS == "linux" || runtime.GOOS == "freebsd" }

// listens reports whether a listener can be made on host, as any server of
// any test would make one (and closes it).
func listens(host string) bool {
	ln, err := net.Listen("tcp", host)
	if err == nil {
		ln.Close()
	}
	return err == nil
}
