// Package exitcode holds the exit codes every panto command shares (SPEC §7)
// and an error type that carries its code.
package exitcode

import (
	"errors"
	"fmt"
)

// The exit codes of SPEC §7. panto-fsck uses its own bitmask instead.
const (
	OK       = 0 // did what was asked
	Findings = 1 // ran, and found what the caller must look at
	Usage    = 2 // bad flags or arguments; nothing done
	Failure  = 3 // I/O, lock, network or provider failure; nothing half-written
)

// Error is an error with the exit code it should end the process with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode makes Error a kong.ExitCoder.
func (e *Error) ExitCode() int { return e.Code }

// New wraps err with code. A nil err stays nil.
func New(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Usagef returns a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Failuref returns an operational failure (exit 3).
func Failuref(format string, args ...any) error {
	return &Error{Code: Failure, Err: fmt.Errorf(format, args...)}
}

// Findingsf returns a findings error (exit 1).
func Findingsf(format string, args ...any) error {
	return &Error{Code: Findings, Err: fmt.Errorf(format, args...)}
}

// Of returns the exit code err carries: OK for nil, Failure for an error
// that names none.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Failure
}
