// Package cputime reads the CPU time of this process, which benchmarks
// report next to wall time: on a shared machine it is the steadier number,
// and it counts what hand-overs between goroutines cost on every core.
package cputime
