package server

import (
	crand "crypto/rand"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/noise"
)

// policySource is the rand.Source a served policy draws from. It switches
// between two cryptographically strong streams (docs/privacy-model.md rule 4; a seeded
// simulation source is never used):
//
//   - the select stream, a ChaCha8 from noise.NewSecureSource (fresh 256-bit
//     key from crypto/rand, never stored), used by Select;
//   - an update stream, a ChaCha8 keyed by a fresh 256-bit seed from
//     crypto/rand per group commit, used while the rewards of that commit are
//     applied with Update. The seed is stored in the same transaction as the
//     rewards, so after a crash the replay of those rewards draws exactly the
//     same noise (tree nodes, Laplace releases): nothing is redrawn
//     (docs/privacy-model.md rule 5). Replays are exact because a policy's Update noise
//     depends only on its sequence of Updates (true of every mab policy).
//
// Not safe for concurrent use: the experiment's mutex guards it.
type policySource struct {
	cur, sel *rand.ChaCha8
}

func newPolicySource() *policySource {
	s := noise.NewSecureSource()
	return &policySource{cur: s, sel: s}
}

func (s *policySource) Uint64() uint64 { return s.cur.Uint64() }

// updates switches to the update stream keyed by seed.
func (s *policySource) updates(seed [32]byte) { s.cur = rand.NewChaCha8(seed) }

// selects switches back to the select stream.
func (s *policySource) selects() { s.cur = s.sel }

// newSeed returns 32 bytes from crypto/rand.
func newSeed() [32]byte {
	var b [32]byte
	crand.Read(b[:]) // never fails (Go ≥ 1.24)
	return b
}
