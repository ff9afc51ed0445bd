//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httprpc

import "syscall"

// fastPath: the client makes its own HTTP/1.1 exchanges on http://
// endpoints, because alive can tell a connection the peer closed.
const fastPath = true

// alive reports whether an idle connection can carry a request: the peer
// has not closed it and has sent nothing unasked (a server's 408 before it
// closes). It peeks without blocking: one recv that finds nothing.
func (pc *pconn) alive() bool {
	if pc.sr.raw == nil || pc.br.Buffered() > 0 {
		return false
	}
	if pc.peek == nil { // made once, not per call: a closure passed on escapes
		pc.peek = func(fd uintptr) bool {
			var b [1]byte
			_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			pc.idleOK = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
			return true // never wait for the socket to be readable
		}
	}
	pc.idleOK = false
	return pc.sr.raw.Read(pc.peek) == nil && pc.idleOK
}
