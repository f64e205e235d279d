//go:build !purego

package eval

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernel: it needs AVX2 (the byte-to-int
// widening) and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dots2x5AVX is dots2x5 over n rounds, n a positive multiple of 4, in
// AVX2 with fused multiply-adds (dots_amd64.s).
//
//go:noescape
func dots2x5AVX(w0, w1 *uint16, a, b, c, d, e *float64, n int, s *[12]float64)

// poissonFillAVX is fillPoisson's loop in AVX2 (poisson_amd64.s); n is a
// positive multiple of 16.
//
//go:noescape
func poissonFillAVX(st *poissonStreams, thr *[9][16]uint16, w *uint16, n int)
