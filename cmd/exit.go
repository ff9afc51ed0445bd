package cmd

import (
	"context"
	"errors"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/protocol"
)

// Exit codes of spec/error-codes.md §3.
const (
	ExitOK         = 0
	ExitValidation = 1 // configuration or validation error; usage errors too
	ExitNetwork    = 2 // the peer is unreachable or its endpoint is invalid
	ExitAuth       = 3 // registration or authentication refused
	ExitRuntime    = 4 // anything that went wrong while running
	// ExitInterrupted is the shell's convention for a command stopped by
	// SIGINT before it finished its work.
	ExitInterrupted = 130
)

// usageError is a mistake in the command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(err error) error { return &usageError{err} }

// interruptedError is a command stopped by a signal that can be run
// again to carry on: its message says how, on the last line, where
// scripts and people look.
type interruptedError struct {
	resume string // the command line that carries on
	err    error  // context.Canceled, or what it wraps
}

func (e *interruptedError) Error() string { return "interrupted; to resume, run: " + e.resume }
func (e *interruptedError) Unwrap() error { return e.err }

// exitError carries an explicit exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode maps an error of Run to the process exit code. League errors
// take the code of their E-code (error-codes.md §3), with one difference:
// §3 gives E001 and E010 exit 0 because an agent that hands out a
// technical loss has handled them, but for a command whose own call timed
// out (E001) the peer did not answer, which is exit 2, and an invalid move
// it sent itself (E010) is a validation error, exit 1.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		return ExitValidation
	}
	if _, ok := errors.AsType[*config.Error](err); ok {
		return ExitValidation
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	switch code := protocol.CodeOf(err); code {
	case "":
	case protocol.ErrTimeout:
		return ExitNetwork
	case protocol.ErrInvalidMove:
		return ExitValidation
	default:
		return code.ExitCode()
	}
	return ExitRuntime
}
