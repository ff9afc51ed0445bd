package httprpc

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"
)

// FuzzFastHead: a head the fast path serves is one net/http reads the same
// way: POST /mcp, HTTP/1.1, the same Content-Length, no Transfer-Encoding,
// the same decision to close. Whatever the fast path might read otherwise
// must go to net/http instead.
func FuzzFastHead(f *testing.F) {
	for _, s := range []string{
		"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8101\r\nContent-Length: 42\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 0\r\nAccept: application/json\r\nContent-Type: application/json\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 7\r\nconnection: keep-alive, close\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: [::1]:80\r\nContent-Length:  12 \r\nConnection: Keep-Alive\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\nContent-Length: 5\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 00000000000000000000005\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: a b\r\nContent-Length: 5\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nX-\x01: y\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		i := bytes.Index(head, []byte("\r\n\r\n"))
		if i < 0 {
			return
		}
		head = head[:i+4]
		h, ok := parseFastHead(head, 1<<20)
		if !ok {
			return
		}
		if h.size != len(head) {
			t.Fatalf("size %d of a %d-byte head", h.size, len(head))
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
		if err != nil {
			t.Fatalf("fast path serves %q, net/http refuses it: %v", head, err)
		}
		switch {
		case req.Method != http.MethodPost || req.RequestURI != Path || req.URL.Path != Path:
			t.Fatalf("%q: net/http reads %s %s", head, req.Method, req.RequestURI)
		case req.ProtoMajor != 1 || req.ProtoMinor != 1:
			t.Fatalf("%q: net/http reads %s", head, req.Proto)
		case req.ContentLength != h.length || len(req.TransferEncoding) != 0:
			t.Fatalf("%q: net/http reads length %d %v, fast path %d", head, req.ContentLength, req.TransferEncoding, h.length)
		case req.Close != h.close:
			t.Fatalf("%q: net/http close %v, fast path %v", head, req.Close, h.close)
		case req.Host == "":
			t.Fatalf("%q: no Host for net/http", head)
		}
	})
}
