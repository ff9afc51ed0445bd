package httprpc

import (
	"net"
	"os"
	"syscall"
)

// sockReader is what a connection's bufio.Reader reads: the connection,
// with a write that may be left to go out at the next read (see Read), and
// a write that does not wait (tryWrite).
type sockReader struct {
	nc  net.Conn
	raw syscall.RawConn // nil: every write and read as net makes them
	// pending goes out at the start of the next read; a failure to write
	// it is kept in werr until its owner clears it. Only a client leaves
	// a write pending: see Read.
	pending []byte
	werr    error

	// The read under way: its buffer and outcome.
	p     []byte
	n     int
	rerr  error
	wrote bool
	step  func(fd uintptr) bool
	// The write under way (tryWrite).
	w     []byte
	wn    int
	wstep func(fd uintptr) bool
}

// newSockReader reads nc: raw for a plain TCP or Unix connection, as net
// does for anything else (a wrapper's own Read and Write are not bypassed).
func newSockReader(nc net.Conn) *sockReader {
	r := &sockReader{nc: nc}
	switch c := nc.(type) {
	case *net.TCPConn:
		r.raw, _ = c.SyscallConn()
	case *net.UnixConn:
		r.raw, _ = c.SyscallConn()
	}
	return r
}

// writeRestThenRead writes what is pending as net writes, then reads.
func (r *sockReader) writeRestThenRead(p []byte) (int, error) {
	rest := r.pending
	r.pending = nil
	if _, err := r.nc.Write(rest); err != nil {
		r.werr = err
		return 0, err
	}
	return r.nc.Read(p)
}

// opError is err of a raw read or write as net reports one.
func (r *sockReader) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: r.nc.LocalAddr().Network(), Source: r.nc.LocalAddr(), Addr: r.nc.RemoteAddr(),
		Err: os.NewSyscallError(op, err)}
}
