package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/dpbandit/dpbandit/api"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/store"
)

// The decision log, GET /v1/experiments/{id}/log (issue 12): every logged
// decision of an experiment with its reward, as JSON lines, for the data
// owner. It holds raw rewards, which are not differentially private, so it
// is for the admin key only, like the dashboard's internal reward curve.
//
// The log is read from the store in pages of logPage rows, without taking
// the experiment's lock: it shows the decisions logged so far (a decision
// is logged by the group commit a few milliseconds after it is served) with
// the rewards stored when its page was read. Lines are in seq order; a
// client resumes with cursor = the last line's seq. A read that fails after
// the first line ends the stream with one line {"error": {"code",
// "message"}} (the status is 200 by then): resume from the last seq.

// logPage is how many rows one store read returns.
const logPage = 5000

// maxLogLimit bounds the limit parameter (and the cursor's type is int64).
const maxLogLimit = 1_000_000_000

// logTimeFormat is RFC 3339 in UTC with milliseconds, the stored precision.
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// logLine is one line of the log (the wire type is the client's too).
type logLine = api.LogLine

func newLogLine(c *Config, r *store.LogRow) logLine {
	l := logLine{Seq: r.Seq, EventID: r.EventID, Time: r.CreatedAt.UTC().Format(logTimeFormat), ArmIndex: r.Arm, Frozen: r.Frozen, Features: r.Features}
	if r.Arm >= 0 && r.Arm < len(c.Arms) {
		l.Arm = c.Arms[r.Arm]
	}
	if r.Propensity != nil {
		p, n := *r.Propensity, r.PropensityDraws
		l.Propensity, l.PropensityDraws, l.PropensityReleased = &p, &n, true
	}
	if rw := r.Reward; rw != nil {
		l.RewardTime, l.DefaultReward, l.RewardPurged = rw.CreatedAt.UTC().Format(logTimeFormat), rw.Default, rw.Purged
		if !rw.Purged {
			v := rw.Value
			l.Reward = &v
		}
	}
	return l
}

// logParams parses cursor and limit (0: no limit).
func logParams(r *http.Request) (cursor int64, limit int, e *apiError) {
	q := r.URL.Query()
	for name, vs := range q {
		if name != "cursor" && name != "limit" {
			return 0, 0, errf(http.StatusBadRequest, "invalid_request", fmt.Sprintf("unknown query parameter %q: the log takes cursor (the seq after which to start, from the last line read) and limit (how many lines)", truncate(name, 40)))
		}
		if len(vs) > 1 {
			return 0, 0, errf(http.StatusBadRequest, "invalid_request", fmt.Sprintf("query parameter %s is given %d times; give it once", name, len(vs)))
		}
	}
	if v, ok := q["cursor"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
		if err != nil || n < 0 {
			return 0, 0, errf(http.StatusBadRequest, "invalid_cursor", fmt.Sprintf("cursor %q must be an integer in [0, %d]: the seq of the last line read (0 or omitted: from the start)", truncate(v[0], 40), int64(1<<63-1)))
		}
		cursor = n
	}
	if v, ok := q["limit"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
		if err != nil || n < 1 || n > maxLogLimit {
			return 0, 0, errf(http.StatusBadRequest, "invalid_limit", fmt.Sprintf("limit %q must be an integer in [1, %d] (omit it for the whole log)", truncate(v[0], 40), maxLogLimit))
		}
		limit = int(n)
	}
	return cursor, limit, nil
}

// decisionLog streams an experiment's decision log as JSON lines.
func (s *Server) decisionLog(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "reading the decision log (it holds raw rewards, which are not differentially private)"); e != nil {
		return e
	}
	x, e := s.experiment(r, p)
	if e != nil {
		return e
	}
	cursor, limit, e := logParams(r)
	if e != nil {
		return e
	}
	ctx := r.Context()
	id := x.cfg.ID
	page := func(after int64, left int) ([]store.LogRow, error) {
		n := logPage
		if limit > 0 {
			n = min(n, left)
		}
		return s.eng.st.Log(ctx, id, after, n)
	}
	rows, err := page(cursor, limit)
	if err != nil {
		s.log.Error("read the decision log", "experiment", id, "err", err)
		return errf(http.StatusInternalServerError, "internal", "reading the decision log from the store failed: "+err.Error())
	}
	// The writes go through w (the metrics see the status); flushes and
	// write deadlines through the connection's own writer, which the
	// metrics wrapper does not expose.
	under := w
	if sw, ok := w.(*statusWriter); ok {
		under = sw.ResponseWriter
	}
	rc := http.NewResponseController(under)
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	rc.SetWriteDeadline(time.Now().Add(60 * time.Second))
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	left := limit
	for {
		for i := range rows {
			if err := enc.Encode(newLogLine(x.cfg, &rows[i])); err != nil {
				return nil // the client went away
			}
		}
		if err := bw.Flush(); err != nil {
			return nil
		}
		rc.Flush()
		asked := logPage
		if limit > 0 {
			asked = min(asked, left)
			left -= len(rows)
		}
		if len(rows) < asked || (limit > 0 && left <= 0) {
			return nil
		}
		// Each page has a minute to reach the client: a long log is not
		// cut by the server's write timeout, a stalled client is.
		rc.SetWriteDeadline(time.Now().Add(60 * time.Second))
		last := rows[len(rows)-1].Seq
		if rows, err = page(last, left); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.log.Error("read the decision log", "experiment", id, "after", last, "err", err)
			enc.Encode(map[string]any{"error": errf(http.StatusInternalServerError, "internal",
				fmt.Sprintf("reading the decision log from the store failed after seq %d: %v; resume with cursor=%d", last, err, last))})
			bw.Flush()
			return nil
		}
	}
}
