//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import (
	"io"
	"os"
	"syscall"
)

// Read reads the connection; bytes left in pending go out first, inside
// the same wait for readability as the read of what they provoke. The
// network poller forgets the socket's readiness when that wait begins, so
// a write made inside it may wait for its answer at once: a write followed
// by an ordinary read first reads, finds nothing and only then waits, one
// system call more per exchange on each side.
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
		return 0, err
	case r.werr != nil:
		return 0, r.werr
	case !r.wrote: // the socket took only part: the rest as net writes it
		rest := r.pending
		r.pending = nil
		if err := r.writeRest(rest); err != nil {
			r.werr = err
			return 0, err
		}
		if r.written != nil && !r.written() {
			return 0, errStopped
		}
		return r.nc.Read(p)
	}
	return r.n, r.rerr
}

// writeThenRead is the raw read's step: the write, then reads until one
// finds bytes, the end, or an error.
func (r *sockReader) writeThenRead(fd uintptr) bool {
	if !r.wrote {
		for len(r.pending) > 0 {
			n, err := syscall.Write(int(fd), r.pending)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				return true // Read writes the rest
			case err != nil:
				r.pending = nil
				r.werr = &os.SyscallError{Syscall: "write", Err: err}
				return true
			}
			r.pending = r.pending[n:]
		}
		r.pending, r.wrote = nil, true
		if r.written != nil && !r.written() {
			r.rerr = errStopped
			return true
		}
		return false // wait: nothing can have come yet
	}
	for {
		n, err := syscall.Read(int(fd), r.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			r.rerr = &os.SyscallError{Syscall: "read", Err: err}
		case n == 0 && len(r.p) > 0:
			r.rerr = io.EOF
		default:
			r.n = n
		}
		return true
	}
}
