//go:build !amd64 || purego

package eval

// useAVX2 is false off amd64 (or with the purego tag): dots2x5 runs its
// portable loop.
const useAVX2 = false

func dots2x5AVX(w0, w1 *uint16, a, b, c, d, e *float64, n int, s *[12]float64) {
	panic("eval: no AVX2 kernel on this platform")
}

func poissonFillAVX(st *poissonStreams, thr *[9][16]uint16, w *uint16, n int) {
	panic("eval: no AVX2 kernel on this platform")
}
