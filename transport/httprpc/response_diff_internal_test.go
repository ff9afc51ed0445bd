package httprpc

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// netHTTPRead is net/http's reading of the same bytes: the final response
// (1xx skipped), its body, and how many bytes it took.
func netHTTPRead(in []byte, limit int64) (status int, data []byte, closed bool, used int, err error) {
	r := bytes.NewReader(in)
	br := bufio.NewReaderSize(r, 4096)
	var resp *http.Response
	for i := 0; ; i++ {
		resp, err = http.ReadResponse(br, &http.Request{Method: "POST"})
		if err != nil {
			return 0, nil, false, 0, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == 101 || i == maxInterim {
			break
		}
	}
	if resp.StatusCode < 200 {
		return 0, nil, false, 0, io.ErrUnexpectedEOF
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, nil, false, 0, err
	}
	if int64(len(data)) > limit {
		return 0, nil, false, 0, errTooLarge
	}
	return resp.StatusCode, data, resp.Close, len(in) - r.Len() - br.Buffered(), nil
}

// FuzzReadResponseLikeNetHTTP: where the client keeps a connection, net/http
// must agree on the response and on where it ends.
func FuzzReadResponseLikeNetHTTP(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX: y\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nab"))
	f.Add([]byte("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\nab"))
	f.Add([]byte("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"))
	const limit = 1 << 10
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		br := bufio.NewReaderSize(r, readBufSize)
		status, data, keep, err := readResponse(br, limit)
		if err != nil || !keep {
			return
		}
		used := len(in) - r.Len() - br.Buffered()
		s2, d2, closed, used2, err2 := netHTTPRead(in, limit)
		if err2 != nil {
			return // net/http stricter: a malformed response we accept (reported)
		}
		if closed {
			t.Fatalf("kept, net/http closes\n%q", in)
		}
		if s2 != status || !bytes.Equal(d2, data) || used != used2 {
			t.Fatalf("kept; ours %d %q used %d, net/http %d %q used %d (close %v)\n%q", status, data, used, s2, d2, used2, closed, in)
		}
	})
}
