package httprpc

import (
	"net"
	"syscall"
	"time"
)

// sockReader is what a connection's bufio.Reader reads: the connection,
// with a write that may be left to go out at the next read (see Read).
type sockReader struct {
	nc  net.Conn
	raw syscall.RawConn // nil: every write and read as net makes them
	// pending goes out before the next read; written, if set, is called
	// once it has, and stops the read when it returns false.
	pending []byte
	written func() bool
	// writeTimeout, if set, bounds a pending write that has to wait for
	// the socket to take it: its write deadline is set only then.
	writeTimeout time.Duration
	// werr is the pending write's failure, kept until its owner clears it.
	werr error

	// The read under way: its buffer and outcome.
	p     []byte
	n     int
	rerr  error
	wrote bool
	step  func(fd uintptr) bool
}

// newSockReader reads nc, raw where nc allows it.
func newSockReader(nc net.Conn) *sockReader {
	r := &sockReader{nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		r.raw, _ = sc.SyscallConn()
	}
	return r
}

// writeRest writes what the socket did not take at once, as net writes,
// within writeTimeout if set.
func (r *sockReader) writeRest(rest []byte) error {
	if r.writeTimeout > 0 {
		if err := r.nc.SetWriteDeadline(time.Now().Add(r.writeTimeout)); err != nil {
			return err
		}
	}
	_, err := r.nc.Write(rest)
	return err
}

// errStopped is a read that written stopped.
const errStopped = constError("stopped after the response")
