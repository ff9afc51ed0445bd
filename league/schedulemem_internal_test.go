package league

import (
	"runtime"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// heapAlloc is the bytes of live objects on the heap, after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestScheduleAnswersMemory: ten clients that ask at once for the whole
// schedule of a league of 400 players (79,800 matches, about 8 MB of JSON
// an answer) and never read their answers make the manager hold ten
// answers, each built and encoded as a server does, and kept as a server
// keeps an answer it cannot write. Each is bounded (MaxScheduleMatches),
// and so is how many are built at once (MaxScheduleAnswers): the heap
// grows by what the bounds allow, with room to spare (512 bytes a match,
// where a match takes about 220, value and JSON), not by ten whole
// schedules (about 175 MB).
func TestScheduleAnswersMemory(t *testing.T) {
	is := is.New(t)
	m := runningManager(t, 400)
	const clients = 10
	const perMatch = 512 // bytes held of a match of an answer: its value and its JSON, generously
	before := heapAlloc()

	answers := make([]*protocol.LeagueQueryResponse, clients)
	encoded := make([][]byte, clients)
	var built, release, done sync.WaitGroup
	built.Add(clients)
	release.Add(1)
	for i := range clients {
		done.Go(func() {
			defer release.Wait() // a client that never reads: its answer stays
			defer built.Done()
			resp, err := m.Answer(t.Context(), scheduleQuery(0, ""), "", "")
			if err != nil {
				t.Error(err)
				return
			}
			answers[i] = resp
			if encoded[i], err = json.Marshal(resp); err != nil { // what a server writes
				t.Error(err)
			}
		})
	}
	built.Wait()
	growth := int64(heapAlloc()) - int64(before)
	release.Done()
	done.Wait()

	matches := 0
	for _, resp := range answers {
		is.True(resp.Success)
		for _, r := range resp.Data.(*ScheduleData).Rounds {
			matches += len(r.Matches)
		}
	}
	is.True(matches <= clients*MaxScheduleMatches)               // each answer bounded
	is.True(m.scheduleAnswers.peak.Load() <= MaxScheduleAnswers) // and the answers built at once
	t.Logf("heap grew %d bytes for %d answers of %d matches in all", growth, clients, matches)
	is.True(growth < int64(clients*MaxScheduleMatches*perMatch)) // the heap, by what the bounds allow
	runtime.KeepAlive(encoded)
}
