//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || windows)

package sqlite

import "os"

// tryLock: this platform has no OS file lock here; one server per database
// file is then the operator's responsibility.
func tryLock(f *os.File) error { return nil }

func unlock(f *os.File) error { return nil }
