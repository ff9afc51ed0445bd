//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import (
	"io"
	"net"
	"syscall"
)

// Read reads the connection; bytes left in pending go out first, inside
// the same wait for readability as the read of the answer they provoke.
// The network poller forgets the socket's readiness when that wait begins,
// so a write made inside it can wait for its answer at once, where a write
// followed by an ordinary read first reads, finds nothing and only then
// waits: one system call less per exchange. That is sound only where
// nothing can arrive unasked before the write, which is a client's case:
// what a server sends before it hears the request (a 408 and a close, the
// end of an idle connection) is found by alive before a connection is
// reused, and if it comes after that, the request it then refuses ends the
// connection with a reset that wakes the wait. A server must not do this:
// a pipelined request or a client's FIN that arrived during its handler
// would be forgotten.
func (r *sockReader) Read(p []byte) (int, error) {
	if r.pending == nil || r.raw == nil {
		return r.nc.Read(p)
	}
	if r.step == nil { // made once, not per call: a closure passed on escapes
		r.step = r.writeThenRead
	}
	r.p, r.n, r.rerr, r.wrote = p, 0, nil, false
	err := r.raw.Read(r.step)
	r.p = nil
	switch {
	case err != nil: // closed, or past the read deadline
		r.pending = nil
		if oe, ok := err.(*net.OpError); ok && oe.Op == "raw-read" {
			oe.Op = "read"
		}
		return 0, err
	case r.werr != nil:
		return 0, r.werr
	case !r.wrote: // the socket took only part: the rest as net writes it
		return r.writeRestThenRead(p)
	}
	return r.n, r.rerr
}

// writeThenRead is the raw read's step: the write, then reads until one
// finds bytes, the end, or an error.
func (r *sockReader) writeThenRead(fd uintptr) bool {
	if !r.wrote {
		n, err := r.writeNoWait(fd, r.pending)
		switch {
		case err != nil:
			r.pending, r.werr = nil, err
			return true
		case n < len(r.pending):
			r.pending = r.pending[n:]
			return true // Read writes the rest
		}
		r.pending, r.wrote = nil, true
		return false // wait: nothing can have come yet (see Read)
	}
	for {
		n, err := syscall.Read(int(fd), r.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			r.rerr = r.opError("read", err)
		case n == 0 && len(r.p) > 0:
			r.rerr = io.EOF
		default:
			r.n = n
		}
		return true
	}
}

// tryWrite writes as much of b as the socket takes without waiting, and
// reports how much that was: a server's response written this way needs
// no write deadline unless some is left to write.
func (r *sockReader) tryWrite(b []byte) (int, error) {
	if r.raw == nil {
		return 0, nil
	}
	if r.wstep == nil {
		r.wstep = r.writeSome
	}
	r.w, r.wn, r.werr = b, 0, nil
	err := r.raw.Write(r.wstep)
	r.w = nil
	if err != nil {
		return r.wn, err
	}
	err, r.werr = r.werr, nil
	return r.wn, err
}

// writeSome is tryWrite's step: it never waits for the socket.
func (r *sockReader) writeSome(fd uintptr) bool {
	r.wn, r.werr = r.writeNoWait(fd, r.w)
	return true
}

// writeNoWait writes b on fd until it is written or the socket would
// block, and returns how much it wrote.
func (r *sockReader) writeNoWait(fd uintptr, b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := syscall.Write(int(fd), b[done:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return done, nil
		case err != nil:
			return done, r.opError("write", err)
		}
		done += n
	}
	return done, nil
}
