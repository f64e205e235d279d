package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/dpbandit/dpbandit/api"
	"net/http"
	"net/url"
	"strconv"
)

// LogLine is one line of an experiment's decision log (GET
// /v1/experiments/{id}/log): a logged decision with its reward. It holds the
// raw reward, which is not differentially private: the log is for the data
// owner (admin key only).
type LogLine struct {
	api.LogLine
	// Raw is the line as answered (without its newline), including fields
	// this client does not know.
	Raw []byte `json:"-"`
}

// Log streams experiment expID's decision log (admin key only), calling fn
// for each line in seq order, starting after seq cursor (0: from the
// start), for at most limit lines (0: all). It returns the seq of the last
// line passed to fn (cursor when none), from which a later call resumes,
// also on error. An error from fn stops the stream and is returned.
//
// The client's overall request timeout does not apply to the stream, which
// may be long: ctx bounds it.
func (c *Client) Log(ctx context.Context, expID string, cursor int64, limit int, fn func(*LogLine) error) (last int64, err error) {
	last = cursor
	q := url.Values{}
	if cursor > 0 {
		q.Set("cursor", strconv.FormatInt(cursor, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := expPath(expID, "/log")
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return last, fmt.Errorf("client: GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/x-ndjson")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	hc := *c.hc
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return last, fmt.Errorf("client: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return last, decodeError(resp, http.MethodGet, path)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var l LogLine
		if bytes.HasPrefix(b, []byte(`{"error"`)) {
			// The service failed after the first line: its last line says why.
			ae := &APIError{Status: http.StatusInternalServerError, Method: http.MethodGet, Path: path, Body: append([]byte(nil), b...)}
			var env struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if json.Unmarshal(b, &env) == nil {
				ae.Code, ae.Message = env.Error.Code, env.Error.Message
			}
			return last, ae
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return last, fmt.Errorf("client: GET %s: line after seq %d: %w", path, last, err)
		}
		l.Raw = b
		if err := fn(&l); err != nil {
			return last, err
		}
		last = l.Seq
	}
	if err := sc.Err(); err != nil {
		return last, fmt.Errorf("client: GET %s: the stream broke after seq %d (resume with cursor %d): %w", path, last, last, err)
	}
	return last, nil
}
