//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package httprpc

// Read reads the connection, after writing what is pending.
func (r *sockReader) Read(p []byte) (int, error) {
	if r.pending != nil {
		rest := r.pending
		r.pending = nil
		if err := r.writeRest(rest); err != nil {
			r.werr = err
			return 0, err
		}
		if r.written != nil && !r.written() {
			return 0, errStopped
		}
	}
	return r.nc.Read(p)
}
