//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package httprpc

// Read reads the connection, after writing what is pending.
func (r *sockReader) Read(p []byte) (int, error) {
	if r.pending != nil {
		return r.writeRestThenRead(p)
	}
	return r.nc.Read(p)
}

// tryWrite writes nothing here: the caller writes b as net does.
func (r *sockReader) tryWrite(b []byte) (int, error) { return 0, nil }
