package httprpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// bodyBudget bounds the bytes of request bodies a server holds at once,
// in all and from one address. Each connection may hold a body of up to
// the body limit, so without it the bound is connections × that limit: a
// few hundred slow bodies from one address take gigabytes. A body's
// bytes are reserved before they are read (its declared length, or step
// by step as a chunked one comes) and given back once its answer is
// made, for the body lives as long as its handler may read it, but not
// while the answer is written: a client that does not read its answers
// holds no budget by it.
type bodyBudget struct {
	total, perAddress int64 // 0: no bound
	logger            *slog.Logger

	mu        sync.Mutex
	held      int64
	byAddress map[string]int64
	peak      int64 // the most held at once since the server started
	peakOne   int64 // the most one address held at once
	// refused counts the bodies refused since refusals were last logged,
	// at loggedAt.
	refused  int
	loggedAt time.Time
}

// BodyBytes is what a server's request bodies hold, in bytes reserved
// (ServerConfig.MaxBodyBytesInFlight).
type BodyBytes struct {
	Held           int64 // now, in all
	Peak           int64 // the most at once, in all
	PeakPerAddress int64 // the most at once of one address (not counting exempt ones)
}

func newBodyBudget(total, perAddress int64, logger *slog.Logger) *bodyBudget {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &bodyBudget{total: max(total, 0), perAddress: max(perAddress, 0), logger: logger,
		byAddress: map[string]int64{}}
}

// reserve takes n bytes for bb's address, or refuses them, taking
// nothing, and says which bound refused.
func (b *bodyBudget) reserve(bb *budgetedBody, n int64) (ok bool, overAddress bool) {
	if n == 0 {
		return true, false
	}
	address := bb.address
	b.mu.Lock()
	defer b.mu.Unlock()
	mine := b.byAddress[address]
	switch {
	case b.total > 0 && b.held+n > b.total:
	case address != "" && b.perAddress > 0 && mine+n > b.perAddress:
		overAddress = true
	default:
		b.held += n
		b.peak = max(b.peak, b.held)
		if address != "" {
			b.byAddress[address] = mine + n
			b.peakOne = max(b.peakOne, mine+n)
		}
		return true, false
	}
	b.refused++
	if now := time.Now(); now.Sub(b.loggedAt) >= refusalLogEvery {
		attrs := []slog.Attr{slog.Int("refused", b.refused), slog.String("address", bb.client),
			slog.Int64("held", b.held), slog.Int64("held_by_address", mine),
			slog.Int64("max_body_bytes_in_flight", b.total), slog.Int64("max_per_address", b.perAddress)}
		if bb.via != "" {
			attrs = append(attrs, slog.String("via", bb.via))
		}
		b.logger.LogAttrs(context.Background(), slog.LevelWarn, "request bodies refused: over the bytes in flight", attrs...)
		b.refused, b.loggedAt = 0, now
	}
	return false, overAddress
}

func (b *bodyBudget) release(address string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if address == "" {
		return
	}
	if left := b.byAddress[address] - n; left > 0 {
		b.byAddress[address] = left
	} else {
		delete(b.byAddress, address)
	}
}

func (b *bodyBudget) stats() BodyBytes {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BodyBytes{Held: b.held, Peak: b.peak, PeakPerAddress: b.peakOne}
}

// reserveStep is how much of a chunked body is reserved at a time: it
// holds at most this much more than has come, and a body of the largest
// size takes 32 reservations.
const reserveStep = 32 << 10

// errOverBudget ends the read of a chunked body whose next bytes do not
// fit the budget.
type errOverBudget struct{ overAddress bool }

func (errOverBudget) Error() string { return "request bodies in flight over the budget" }

// budgetedBody reads a request body within the bytes reserved for it.
type budgetedBody struct {
	r io.Reader // the body, within the body limit
	b *bodyBudget
	// address is the client's, as its share is counted ("": an address
	// spared the share of one); client and via name it and the proxy it
	// came through in the log.
	address     string
	client, via string
	limit       int64 // the most it may reserve
	reserved    int64
	read        int64
}

// open reserves what a body declares, bounded by the body limit; a
// chunked one reserves as it comes.
func (bb *budgetedBody) open(declared int64) error {
	if declared < 0 {
		return nil
	}
	bb.limit = min(declared, bb.limit)
	if ok, overAddress := bb.b.reserve(bb, bb.limit); !ok {
		return errOverBudget{overAddress}
	}
	bb.reserved = bb.limit
	return nil
}

func (bb *budgetedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	switch avail := bb.reserved - bb.read; {
	case avail > 0:
		p = p[:min(int64(len(p)), avail)]
	case bb.reserved >= bb.limit:
		// All it may hold is reserved and read: the one byte more is only
		// asked for, to learn the end (EOF) or a body over the limit, and
		// is not returned.
		p = p[:1]
	default:
		step := min(reserveStep, bb.limit-bb.reserved)
		if ok, overAddress := bb.b.reserve(bb, step); !ok {
			// A body that has ended is not refused for bytes it will not
			// send: one byte asked for tells.
			if n, err := bb.r.Read(p[:1]); n == 0 && err == io.EOF {
				return 0, io.EOF
			}
			return 0, errOverBudget{overAddress}
		}
		bb.reserved += step
		p = p[:min(int64(len(p)), step)]
	}
	n, err := bb.r.Read(p)
	bb.read += int64(n)
	return n, err
}

// close gives the body's bytes back; again, it does nothing.
func (bb *budgetedBody) close() {
	bb.b.release(bb.address, bb.reserved)
	bb.reserved, bb.limit = 0, 0
}

// retryBodiesAfter is what a refused body is told to wait: bodies are
// read within the read timeout, most in far less.
const retryBodiesAfter = time.Second

// writeOverBudget answers a body refused for the budget: 503 with
// Retry-After, and E016, retryable, as a JSON-RPC error whose context
// says which bound it met.
func (b *bodyBudget) writeOverBudget(w http.ResponseWriter, err error) {
	var over errOverBudget
	errors.As(err, &over)
	limit, whose := b.total, "the server's"
	if over.overAddress {
		limit, whose = b.perAddress, "one address's"
	}
	e := protocol.ToRPCError(&protocol.Error{Code: protocol.ErrServiceUnavailable,
		Detail: "request bodies being read are over " + whose + " bound of " + strconv.FormatInt(limit, 10) + " bytes; try again",
		Context: map[string]any{"limit": strconv.FormatInt(limit, 10) + " bytes of request bodies at once",
			"limit_bytes": limit, "scope": map[bool]string{false: "server", true: "address"}[over.overAddress],
			"retry_after_sec": int64(retryBodiesAfter / time.Second), "retry_after_ms": retryBodiesAfter.Milliseconds()}})
	w.Header().Set("Retry-After", strconv.Itoa(int(retryBodiesAfter/time.Second)))
	writeRaw(w, http.StatusServiceUnavailable, protocol.AppendError(nil, nil, e))
}
