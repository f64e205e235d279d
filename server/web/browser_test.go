package web_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/dpbandit/dpbandit/client"
	"github.com/dpbandit/dpbandit/client/clienttest"
	"github.com/dpbandit/dpbandit/server/web"
)

const adminKey = "dpb_admin_browser_test_key_0123456789"

// findChromium returns the browser to drive: $DPBANDIT_CHROMIUM, else
// Debian's /usr/bin/chromium, else the usual names on $PATH.
func findChromium() string {
	if p := os.Getenv("DPBANDIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startService starts the real `dpbandit serve` on a free loopback port with
// a fresh database and a known admin key, and returns its base URL. When the
// binary has no serve command yet, it falls back to the clienttest stand-in
// with the dashboard mounted at GET /, and says so in the log.
func startService(t *testing.T) string {
	t.Helper()
	if os.Getenv("DPBANDIT_WEB_STANDIN") == "" {
		if url, ok := startBinary(t); ok {
			return url
		}
	}
	t.Log("testing the dashboard against the clienttest stand-in (dpbandit serve is not available)")
	s := clienttest.NewServer(adminKey)
	s.Handle("GET /", web.Handler())
	t.Cleanup(s.Close)
	return s.URL
}

func startBinary(t *testing.T) (string, bool) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		t.Fatalf("cannot find the module root (go env GOMOD): %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "dpbandit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dpbandit")
	build.Dir = filepath.Dir(gomod)
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dpbandit: %v\n%s", err, msg)
	}
	if err := exec.Command(bin, "serve", "--help").Run(); err != nil {
		return "", false // no serve command in this build
	}
	// Port 0: the server prints the address it listens on.
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "dpbandit.db"), "--admin-key", adminKey)
	var logs syncBuffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dpbandit serve: %v", err)
	}
	var waitErr error
	done := make(chan struct{}) // closed when the process has exited (waitErr set)
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("dpbandit serve stderr:\n%s", logs.String())
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "serving on "); ok {
				u, _, _ := strings.Cut(rest, " ")
				select {
				case addr <- u:
				default:
				}
			}
		}
	}()
	select {
	case u := <-addr:
		if err := waitHealthy(u, done); err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
		return u, true
	case <-done:
		t.Fatalf("dpbandit serve exited: %v\n%s", waitErr, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("dpbandit serve printed no \"serving on\" line within 30s\n%s", logs.String())
	}
	return "", false
}

func waitHealthy(url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("dpbandit serve exited")
		default:
		}
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("no healthy answer from /healthz within 20s")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func sel(testid string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + testid + `"]`) }

// waitText polls the text of the element with the test id until ok accepts
// it, and returns it.
func waitText(ctx context.Context, t *testing.T, testid string, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		qctx, qcancel := context.WithTimeout(ctx, time.Second)
		s, err := chromedp.Run(qctx, chromedp.TextContent(sel(testid)))
		qcancel()
		if err == nil {
			last = strings.TrimSpace(s)
			if ok(last) {
				return last
			}
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: waited for %s; last text %q", testid, what, last)
	return ""
}

func equals(want string) func(string) bool { return func(s string) bool { return s == want } }

// TestDashboardInBrowser drives the dashboard in headless Chromium: enter the
// admin key, create an experiment through the form, post decisions and
// rewards through the API, and watch the numbers on the page change.
func TestDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := findChromium()
	if chromium == "" {
		t.Skip("no Chromium found: install Debian's chromium (apt-get install -y chromium) or set DPBANDIT_CHROMIUM to a Chrome/Chromium binary")
	}
	base := startService(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(1280, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer bcancel()

	var exMu sync.Mutex
	var exceptions []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			exMu.Lock()
			exceptions = append(exceptions, msg)
			exMu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting Chromium (%s): %v", chromium, err)
	}

	// Load the page and enter the key.
	if err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(sel("key-input")),
		chromedp.SendKeys(sel("key-input"), adminKey),
		chromedp.Click(sel("key-submit")),
		chromedp.WaitVisible(sel("experiment-list")),
		chromedp.WaitVisible(sel("new-experiment")),
	); err != nil {
		t.Fatalf("loading the page and entering the key: %v", err)
	}
	waitText(bctx, t, "health", "healthy", equals("healthy"))

	// Create an experiment through the form.
	name := "browser-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := chromedp.Do(bctx,
		chromedp.Click(sel("new-experiment")),
		chromedp.WaitVisible(sel("create-form")),
		// The policy list loads asynchronously.
		chromedp.WaitReady(chromedp.CSS(`[data-testid="create-policy"] option[value="mts-gaussian"]`)),
		chromedp.SetValue(sel("create-policy"), "mts-gaussian"),
		chromedp.SendKeys(sel("create-name"), name),
		chromedp.SendKeys(sel("create-arms"), "control, blue, green"),
		chromedp.SetValue(sel("create-horizon"), "10000"),
		chromedp.SetValue(sel("create-epsilon"), "0"),
		chromedp.SetValue(sel("create-delta"), "1e-6"),
		chromedp.Click(sel("create-submit")),
	); err != nil {
		t.Fatalf("filling the create form: %v", err)
	}
	// ε = 0 is refused by the server; the form shows its message.
	waitText(bctx, t, "create-error", "the server's 400", func(s string) bool {
		return strings.HasPrefix(s, "400: ") && (strings.Contains(s, "epsilon") || strings.Contains(s, "budget"))
	})
	if err := chromedp.Do(bctx,
		chromedp.SetValue(sel("create-epsilon"), "1"),
		chromedp.Click(sel("create-submit")),
	); err != nil {
		t.Fatalf("resubmitting the create form: %v", err)
	}
	waitText(bctx, t, "exp-name", "the new experiment's page", equals(name))
	id := waitText(bctx, t, "exp-id", "an id", func(s string) bool { return s != "" })
	words := waitText(bctx, t, "privacy-words", "the privacy report in words", func(s string) bool { return s != "" })
	if !strings.Contains(words, "This experiment is (1.0, 1e-6)-DP for each user's reward") {
		t.Errorf("privacy words = %q, want the (1.0, 1e-6)-DP statement", words)
	}
	waitText(bctx, t, "decisions-count", "0 decisions", equals("0"))
	waitText(bctx, t, "budget-total", "the budget", func(s string) bool { return strings.Contains(s, "(1.0, 1e-6)-DP") })
	rows, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="experiment-row"]').length`))
	if err != nil || rows < 1 {
		t.Errorf("experiment rows in the list = %d (%v), want ≥ 1", rows, err)
	}

	// Post decisions and rewards through the API.
	c, err := client.New(base, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	api := context.Background()
	batch, err := c.DecideBatch(api, id, 40)
	if err != nil {
		t.Fatalf("batch decide: %v", err)
	}
	var ds []client.Decision
	ds = append(ds, batch...)
	for i := range 20 {
		d, err := c.Decide(api, id, client.DecideRequest{EventID: fmt.Sprintf("ev-%d", i)})
		if err != nil {
			t.Fatalf("decide: %v", err)
		}
		ds = append(ds, d)
	}
	var rw []client.Reward
	for i, d := range ds[:30] {
		rw = append(rw, client.Reward{EventID: d.EventID, Reward: float64(i%2) * 1.0})
	}
	if err := c.RewardBatch(api, id, rw[:20]); err != nil {
		t.Fatalf("batch reward: %v", err)
	}
	for _, r := range rw[20:] {
		if err := c.Reward(api, id, r.EventID, r.Reward); err != nil {
			t.Fatalf("reward: %v", err)
		}
	}
	exp, err := c.GetExperiment(api, id)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Decisions != 60 {
		t.Fatalf("API reports %d decisions, want 60", exp.Decisions)
	}

	// The page catches up on its own.
	waitText(bctx, t, "decisions-count", "60 decisions", equals("60"))
	waitText(bctx, t, "rewards-count", "30 rewards", equals("30"))
	if path := os.Getenv("DPBANDIT_WEB_SHOT"); path != "" { // opt-in: a PNG of the page for humans
		if png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)); err != nil {
			t.Logf("screenshot: %v", err)
		} else if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Logf("screenshot: %v", err)
		}
	}
	armSum, err := chromedp.Run(bctx, chromedp.Evaluate[int](
		`[...document.querySelectorAll('[data-testid="arm-decisions"]')].reduce((s, e) => s + (parseInt(e.textContent.replace(/,/g, ''), 10) || 0), 0)`))
	if err != nil {
		t.Fatal(err)
	}
	points, err := chromedp.Run(bctx, chromedp.Evaluate[int](`parseInt(document.querySelector('[data-testid="shares-chart"]').dataset.points || '0', 10)`))
	if err != nil {
		t.Fatal(err)
	}
	sharesNote, err := chromedp.Run(bctx, chromedp.Text(sel("shares-note")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sharesNote, "no per-arm") {
		if armSum != 60 {
			t.Errorf("per-arm decisions on the page add up to %d, want 60", armSum)
		}
		if points < 1 {
			t.Errorf("shares chart has %d points, want ≥ 1 (note: %q)", points, sharesNote)
		}
	} else {
		t.Logf("the server sends no per-arm decision counts: %q", sharesNote)
	}
	if exp.Privacy.Share > 0 {
		// The gauge shows the share the API reports (or a later, larger
		// one), in the budget's own units, named: "7.5% of ε".
		waitText(bctx, t, "budget-gauge-text", "a positive share spent, with its unit", func(s string) bool {
			return !strings.HasPrefix(s, "0%") && strings.HasSuffix(s, "% of ε")
		})
		frac, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`parseFloat(document.querySelector('[data-testid="budget-gauge"]').dataset.fraction)`))
		if err != nil || frac < exp.Privacy.Share {
			t.Errorf("gauge share = %v (%v), want ≥ %v as the API reports", frac, err, exp.Privacy.Share)
		}
	}

	// Admin only: the internal reward curve, labelled as such.
	internalVisible, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`!document.querySelector('[data-testid="internal"]').hidden`))
	if err != nil {
		t.Fatal(err)
	}
	if internalVisible {
		waitText(bctx, t, "internal-label", "the internal label", equals("internal, not private"))
	} else {
		t.Log("the server sends no internal aggregates: the reward curve is hidden")
	}

	// A non-private experiment says so in words.
	np, err := c.CreateExperiment(api, client.ExperimentSpec{Name: name + "-np", Arms: []string{"a", "b"}, Policy: "beta-ts", Horizon: 100})
	if err != nil {
		t.Fatalf("creating a non-private experiment: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`location.hash = '#/experiments/' + encodeURIComponent(`+strconv.Quote(np.ID)+`)`)); err != nil {
		t.Fatal(err)
	}
	waitText(bctx, t, "privacy-words", "\"not private\"", func(s string) bool { return strings.HasPrefix(s, "Not private") })
	waitText(bctx, t, "budget-spent", "not private", equals("not private"))

	// The key survives a reload (sessionStorage) and can be forgotten.
	if err := chromedp.Do(bctx,
		chromedp.Reload(),
		chromedp.WaitVisible(sel("key-forget")),
		chromedp.Click(sel("key-forget")),
		chromedp.WaitVisible(sel("key-input")),
	); err != nil {
		t.Fatalf("reload and forget the key: %v", err)
	}

	// A client key may only decide and reward: the page says so and offers
	// no experiment creation.
	ck, err := c.CreateKey(api, id)
	if err != nil {
		t.Fatalf("creating a client key: %v", err)
	}
	if err := chromedp.Do(bctx,
		chromedp.SendKeys(sel("key-input"), ck.Secret),
		chromedp.Click(sel("key-submit")),
	); err != nil {
		t.Fatal(err)
	}
	waitText(bctx, t, "key-role", "the client role", equals("client key"))
	waitText(bctx, t, "welcome", "the client-key message", func(s string) bool { return strings.Contains(s, "client key") })
	newHidden, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="new-experiment"]').hidden`))
	if err != nil || !newHidden {
		t.Errorf("the New button is visible for a client key (%v)", err)
	}

	exMu.Lock()
	defer exMu.Unlock()
	for _, e := range exceptions {
		t.Errorf("uncaught exception in the page: %s", e)
	}
}

// TestDashboardWrongKey checks that a wrong key is refused with a message.
func TestDashboardWrongKey(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := findChromium()
	if chromium == "" {
		t.Skip("no Chromium found: install Debian's chromium (apt-get install -y chromium) or set DPBANDIT_CHROMIUM")
	}
	s := clienttest.NewServer(adminKey)
	s.Handle("GET /", web.Handler())
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(s.URL+"/"),
		chromedp.SendKeys(sel("key-input"), "wrong"),
		chromedp.Click(sel("key-submit")),
	); err != nil {
		t.Fatal(err)
	}
	waitText(bctx, t, "banner", "a 401 message", func(s string) bool { return strings.Contains(s, "401") })
	if err := chromedp.Do(bctx, chromedp.WaitVisible(sel("key-input"))); err != nil {
		t.Fatal(err)
	}
}
