// Package timebound runs a call under a time bound in tests, so that a
// hang (an unbounded search, a deadlock) fails the test with a message
// instead of stalling the test binary until its global timeout.
package timebound

import (
	"testing"
	"time"
)

// Within runs fn in a goroutine and fails t if fn panics or has not
// returned after d. A timed-out call cannot be stopped: it is left running
// and the test fails at once.
func Within(t testing.TB, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		fn()
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s panicked: %v", what, p)
		}
	case <-time.After(d):
		t.Fatalf("%s did not return within %v (unbounded search)", what, d)
	}
}
