package groupcommit_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/groupcommit"
)

// TestGroups: the writes that come while a group commits go together in
// the next, at most max of them, in the order they came; one taken back
// before the loop takes it is never committed; Close stops the loop and
// hands back what it had not taken, and nothing is added after.
func TestGroups(t *testing.T) {
	is := is.New(t)
	entered, release := make(chan struct{}), make(chan struct{})
	groups := make(chan []int, 10)
	q := groupcommit.Start(2, func(batch []int) {
		groups <- append([]int(nil), batch...)
		if batch[0] == 1 {
			close(entered)
			<-release // the first group commits while others come
		}
	})
	is.True(q.Add(1))
	<-entered
	for _, w := range []int{2, 3, 4, 5} {
		is.True(q.Add(w))
	}
	is.True(q.TakeBack(3))  // its caller has gone
	is.True(!q.TakeBack(1)) // taken: its outcome is its group's
	is.Equal(q.Len(), 3)
	close(release)
	is.Equal(<-groups, []int{1})
	is.Equal(<-groups, []int{2, 4}) // at most 2, in order
	is.Equal(<-groups, []int{5})
	is.Equal(len(q.Close()), 0) // all taken
	is.True(!q.Add(6))          // closed
	is.Equal(len(q.Close()), 0)
}
