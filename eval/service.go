package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/dpbandit/dpbandit/api"
)

// ServiceSkip says why a line of the decision service's log (GET
// /v1/experiments/{id}/log, `dpbandit export`) cannot be a row of logged
// bandit feedback, or "" when it can: its reward is missing or deleted, or
// the decision has no released propensity, or a Monte Carlo propensity
// estimated as 0 (inverse propensity weighting needs pscore > 0).
func ServiceSkip(l *api.LogLine) string {
	switch {
	case l.RewardPurged:
		return "reward deleted"
	case l.Reward == nil:
		return "no reward yet"
	case !l.PropensityReleased || l.Propensity == nil:
		return "no released propensity"
	case !(*l.Propensity > 0):
		return "propensity estimated as 0"
	}
	return ""
}

// ServiceCounts are the lines ReadService read and the reasons it left some
// out (ServiceSkip's reasons, counted).
type ServiceCounts struct {
	Lines   int
	Skipped map[string]int
}

// String lists the skipped lines by reason, e.g. "12 no released propensity".
func (c ServiceCounts) String() string {
	var parts []string
	for _, why := range []string{"no reward yet", "reward deleted", "no released propensity", "propensity estimated as 0"} {
		if n := c.Skipped[why]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, why))
		}
	}
	return strings.Join(parts, ", ")
}

// ReadService reads the decision service's log as JSONL (one api.LogLine
// per line, as `dpbandit export` writes it): action = arm_index, reward =
// the raw reward, pscore = the released propensity, context = the chosen
// candidate's features (contextual experiments), timestamp = the decision
// time. Lines ServiceSkip rejects are counted, not used. Errors name the
// line.
func ReadService(r io.Reader, name string) (*Log, ServiceCounts, error) {
	cnt := ServiceCounts{Skipped: map[string]int{}}
	l := &Log{P: 1, D: -1}
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, cnt, err
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			var ll api.LogLine
			if jerr := json.Unmarshal([]byte(s), &ll); jerr != nil {
				return nil, cnt, &ParseError{Name: name, Line: line, Err: fmt.Errorf("not a decision-log line: %v", jerr)}
			}
			cnt.Lines++
			if ll.ArmIndex < 0 || ll.ArmIndex >= 1<<20 {
				return nil, cnt, &ParseError{Name: name, Line: line, Err: fmt.Errorf("arm_index %d outside [0, 2^20)", ll.ArmIndex)}
			}
			if l.D < 0 {
				l.D = len(ll.Features)
			} else if len(ll.Features) != l.D {
				return nil, cnt, &ParseError{Name: name, Line: line, Err: fmt.Errorf("%d features, the earlier lines %d", len(ll.Features), l.D)}
			}
			if why := ServiceSkip(&ll); why != "" {
				cnt.Skipped[why]++
			} else {
				p, rw := *ll.Propensity, *ll.Reward
				if !(p > 0 && p <= 1) {
					return nil, cnt, &ParseError{Name: name, Line: line, Err: fmt.Errorf("propensity %v outside (0, 1]", p)}
				}
				if math.IsNaN(rw) || math.IsInf(rw, 0) {
					return nil, cnt, &ParseError{Name: name, Line: line, Err: fmt.Errorf("reward %v is not a finite number", rw)}
				}
				for _, x := range ll.Features {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						return nil, cnt, &ParseError{Name: name, Line: line, Err: fmt.Errorf("feature %v is not a finite number", x)}
					}
				}
				l.Action = append(l.Action, int32(ll.ArmIndex))
				l.Reward = append(l.Reward, rw)
				l.PScore = append(l.PScore, p)
				l.Context = append(l.Context, ll.Features...)
				l.A = max(l.A, ll.ArmIndex+1)
				l.N++
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if l.D < 0 {
		l.D = 0
	}
	if l.N == 0 {
		return nil, cnt, fmt.Errorf("%s: no usable rows in %d lines (%s)", name, cnt.Lines, cnt)
	}
	return l, cnt, nil
}

// ReadServiceFile is ReadService on a file.
func ReadServiceFile(path string) (*Log, ServiceCounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ServiceCounts{}, err
	}
	defer f.Close()
	return ReadService(f, path)
}
