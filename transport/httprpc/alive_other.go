//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package httprpc

// fastPath: without a way to tell a connection the peer closed from one
// kept alive, every exchange goes through net/http.
const fastPath = false

func (pc *pconn) alive() bool { return false }
