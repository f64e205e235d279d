package noise

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
)

// NewSecureSource returns a ChaCha8 generator seeded with 32 bytes from
// crypto/rand, for the serving path (docs/privacy-model.md rule 4).
//
// Why the seed matters: every differential-privacy guarantee is a statement
// about the distribution of the noise given everything the adversary knows.
// If the seed is predictable (a constant, a config value, a timestamp, a
// simulation seed), the adversary can regenerate the noise, subtract it, and
// recover the exact statistic: the mechanism is then 0-noise and ∞-DP,
// whatever ε the accountant records. ChaCha8 is documented as
// cryptographically strong, so with a secret uniformly random 256-bit key its
// output is computationally indistinguishable from uniform, which is what the
// DP proofs assume.
//
// Concurrency: the returned *rand.ChaCha8 is not safe for concurrent use; give
// each goroutine its own, or guard it. It is 5–8× cheaper per word than
// crypto/rand (noise/BENCHMARKS.txt), so use it for the many draws of
// Thompson sampling on the serving path; the release mechanisms default to
// [CryptoSource], which needs no lock.
func NewSecureSource() *rand.ChaCha8 {
	var seed [32]byte
	crand.Read(seed[:]) // never returns an error (crypto/rand docs, Go ≥ 1.24)
	return rand.NewChaCha8(seed)
}

// CryptoSource is a rand.Source that reads every word from crypto/rand. The
// zero value is ready to use, it holds no state, and it is safe for concurrent
// use. It is the default source of [BitSource], [GridLaplace] and
// [GridGaussian]. Cost: one crypto/rand.Read of 8 bytes per word (55 ns or
// more, against about 10 ns for ChaCha8; see BENCHMARKS.txt).
type CryptoSource struct{}

// Uint64 returns a uniformly distributed 64-bit word from crypto/rand.
func (CryptoSource) Uint64() uint64 {
	var b [8]byte
	crand.Read(b[:]) // never returns an error (crypto/rand docs, Go ≥ 1.24)
	return binary.LittleEndian.Uint64(b[:])
}
