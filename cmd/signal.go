package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalError is the cause of a context ended by a signal (WithSignals):
// a command it stops exits 128 plus the signal's number, as a shell says
// of a process a signal ended (130 for SIGINT, 143 for SIGTERM).
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string { return "interrupted by " + e.Signal.String() }

// WithSignals is parent, ended by the first SIGINT or SIGTERM with a
// SignalError as its cause, so that Run can tell them apart. stop lets the
// signals go back to their default: a second one ends the process at
// once.
func WithSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&SignalError{Signal: sig})
			signal.Stop(ch) // a second signal is the default's: the end
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// signalExit gives err, a command's end by ctx's cancellation, the exit
// code of the signal that caused it, if one did.
func signalExit(ctx context.Context, err error) error {
	s, ok := context.Cause(ctx).(*SignalError)
	if !ok || ExitCode(err) != ExitInterrupted || s.Signal == syscall.SIGINT {
		return err
	}
	return &exitError{code: 128 + int(s.Signal), err: err}
}
