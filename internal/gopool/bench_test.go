package gopool_test

import (
	"testing"

	"github.com/leaguectl/leaguectl/internal/gopool"
)

// BenchmarkHandOver measures one item handed to a kept goroutine and its
// answer back: the hand-over the bus makes for every call.
func BenchmarkHandOver(b *testing.B) {
	done := make(chan struct{}, 1)
	w := gopool.Workers[int]{Work: func(int) { done <- struct{}{} }}
	b.ReportAllocs()
	for b.Loop() {
		w.Go(1)
		<-done
	}
}
