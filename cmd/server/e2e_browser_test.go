package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// The admin UI driven in a real browser: Debian's chromium, headless, by
// chromedp, against the real server. Without chromium the test skips with a
// message saying how to get it (make browser), unless
// STANDMEET_REQUIRE_BROWSER=1, as in CI, where a missing browser fails.

// chromiumPath finds the browser: $STANDMEET_CHROMIUM, else Debian's
// chromium on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("STANDMEET_CHROMIUM"), "chromium", "chromium-browser"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "chromium not found: the browser tests need Debian's chromium (`make browser` installs it as root, or `apt-get install -y chromium`; STANDMEET_CHROMIUM names another binary)"
	if os.Getenv("STANDMEET_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + "; STANDMEET_REQUIRE_BROWSER=1 makes this a failure")
	}
	t.Skip(msg)
	return ""
}

// browser is a headless chromium tab with a record of the main pages it
// showed, written out as PNG files when the test fails.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots []shot
}

type shot struct {
	name string
	png  []byte
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	// The flags a root session in a container needs: no sandbox as root, no
	// GPU, and no background traffic, which a closed network refuses; a
	// fresh profile every run.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// Registered after the browser's cleanup, so it runs first, while the
	// browser still shows the page the test failed on.
	t.Cleanup(b.saveShotsOnFailure)
	// The first action starts the browser; it gets no deadline of its own
	// (a deadline there would bound the browser's whole life). It fixes the
	// viewport: the window's own size is not one a page always has, and
	// chromium refuses a screenshot while the page's width is 0.
	_, err := chromedp.Run(ctx, desktopViewport())
	require.NoError(t, err, "start %s", path)
	return b
}

// desktopViewport is the viewport every test starts with, and the one a
// test that looked at a phone's width goes back to.
func desktopViewport() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(1280, 900)
}

// stepTimeout bounds one step in the browser: an action, or the wait for
// an element to read.
const stepTimeout = 45 * time.Second

// do runs steps with a deadline.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, steps...))
}

// value runs one action with a deadline and returns its value.
func value[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(b.t, err)
	return v
}

// poll evaluates the JavaScript expression expr every 100 ms until done
// takes its value, and returns that value, or an error saying what the last
// try gave once timeout has passed. A try is one Runtime.evaluate, which
// finds what it reads and reads it in the same step. chromedp's element
// reads (Text, TextContent, Value, AttributeValue, OuterHTML) take two: they
// resolve a node id, then read through it, and fail with "No node with
// given id found" when the page replaces its DOM in between (the live
// delivery log, a navigation); here that only costs a try. A failed try is
// tried again too: a navigation destroys the JavaScript context that an
// evaluation runs in.
func poll[T any](b *browser, expr string, timeout time.Duration, done func(T) bool) (T, error) {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithDeadline(b.ctx, deadline.Add(5*time.Second))
		v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
		cancel()
		if err == nil && done(v) {
			return v, nil
		}
		if b.ctx.Err() != nil || !time.Now().Before(deadline) {
			if err == nil {
				got, shown := json.Marshal(v)
				err = errors.Join(fmt.Errorf("the last try gave %s", got), shown)
			}
			var zero T
			return zero, fmt.Errorf("not within %s: %w", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor polls a JavaScript expression until it is true.
func (b *browser) waitFor(expr string, timeout time.Duration) {
	b.t.Helper()
	if _, err := poll(b, expr, timeout, func(ok bool) bool { return ok }); err != nil {
		b.t.Fatalf("waiting for %s on %s: %v", expr, b.location(), err)
	}
}

// read is prop, a JavaScript property or method call, of the first element
// sel matches: read as soon as an element matches, so a page still loading
// is read once the element is there. The test fails, naming sel, when none
// matches (or prop is null or undefined on it) within stepTimeout.
func (b *browser) read(sel, prop string) string {
	b.t.Helper()
	js, err := json.Marshal(sel)
	require.NoError(b.t, err)
	v, err := poll(b, `document.querySelector(`+string(js)+`)?.`+prop+` ?? null`, stepTimeout, func(v *string) bool { return v != nil })
	if err != nil {
		b.t.Fatalf("reading %s of %s on %s: no element matches it, or its %s is null: %v", prop, sel, b.location(), prop, err)
	}
	return *v
}

// text is the text content of the first element sel matches, as
// chromedp.TextContent reads it.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return b.read(sel, "textContent")
}

// innerText is the rendered text of the first element sel matches, as
// chromedp.Text reads it.
func (b *browser) innerText(sel string) string {
	b.t.Helper()
	return b.read(sel, "innerText")
}

// inputValue is the value of the first form control sel matches.
func (b *browser) inputValue(sel string) string {
	b.t.Helper()
	return b.read(sel, "value")
}

// attribute is the attribute name of the first element sel matches; the
// test fails when the element has no such attribute.
func (b *browser) attribute(sel, name string) string {
	b.t.Helper()
	js, err := json.Marshal(name)
	require.NoError(b.t, err)
	return b.read(sel, "getAttribute("+string(js)+")")
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// html is the page's markup, read as read reads an element.
func (b *browser) html() string {
	b.t.Helper()
	return b.read("html", "outerHTML")
}

// screenshot captures the whole page once it has a width. Chromium refuses
// a capture of a page whose width is 0 ("Cannot take screenshot with 0
// width"), as a new document can be between its navigation and its first
// layout on a loaded machine; a refused capture is tried again until the
// deadline.
func (b *browser) screenshot() ([]byte, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := poll(b, `document.body !== null && document.body.getBoundingClientRect().width > 0 && window.innerWidth > 0`,
			time.Until(deadline), func(ok bool) bool { return ok })
		if err != nil {
			return nil, fmt.Errorf("the page has no width: %w", err)
		}
		ctx, cancel := context.WithDeadline(b.ctx, deadline.Add(5*time.Second))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err == nil {
			return png, nil
		}
		if b.ctx.Err() != nil || !time.Now().Before(deadline) {
			return nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// snap keeps a screenshot of the current page, written out if the test
// fails. The screenshots are diagnostics, never assertions: one that cannot
// be taken is logged and the test goes on.
func (b *browser) snap(name string) {
	b.t.Helper()
	png, err := b.screenshot()
	if err != nil {
		b.t.Logf("screenshot %s of %s: %v", name, b.location(), err)
		return
	}
	b.shots = append(b.shots, shot{name: name, png: png})
}

// unlabelled lists the form controls of the page without an accessible
// label.
func (b *browser) unlabelled() []string {
	return value(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("input:not([type=hidden]), select, textarea"))
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.getAttribute("aria-labelledby"))
		.map(e => e.name || e.id)`))
}

// fitsWidth tells whether the page needs no horizontal scrolling.
func (b *browser) fitsWidth() bool {
	return value(b, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`))
}

// artifactDir is where screenshots of a failed run go: the test's artifact
// directory under -outputdir when go test runs with -artifacts, else a
// directory under the system's temporary folder that is kept and named in
// the log.
func artifactDir(t *testing.T) string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir()
	}
	dir := filepath.Join(os.TempDir(), "standmeet-browser", fmt.Sprintf("%s-%d", t.Name(), time.Now().Unix()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return t.TempDir()
	}
	return dir
}

// saveShotsOnFailure writes the screenshots when the test failed, or always
// with STANDMEET_BROWSER_SHOTS=1 (to look at the pages).
func (b *browser) saveShotsOnFailure() {
	if !b.t.Failed() && os.Getenv("STANDMEET_BROWSER_SHOTS") != "1" {
		return
	}
	if png, err := b.screenshot(); err == nil {
		b.shots = append(b.shots, shot{name: "at-failure", png: png})
	} else {
		b.t.Logf("screenshot at-failure: %v", err)
	}
	dir := artifactDir(b.t)
	for i, s := range b.shots {
		p := filepath.Join(dir, fmt.Sprintf("%02d-%s.png", i, s.name))
		if err := os.WriteFile(p, s.png, 0o644); err != nil {
			b.t.Logf("screenshot %s: %v", p, err)
		}
	}
	b.t.Logf("browser screenshots of the main pages: %s (last page: %s)", dir, b.location())
}

func (b *browser) login(ts *testServer, o surfaceOwner) {
	b.t.Helper()
	b.do(
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), o.Email),
		chromedp.SendKeys(chromedp.CSS("#password"), o.Password),
		chromedp.Click(chromedp.CSS(`form[action="/admin/login"] button[type=submit]`)),
	)
}

// apiGet reads an admin REST resource with the owner's key.
func apiGet(t *testing.T, ts *testServer, key, path string, out any) {
	t.Helper()
	status, body := ts.do(t, http.MethodGet, path, key, "")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), out))
}

func TestAdminUIInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	sink := newHookSink(t)

	// Signing in: the UI sends the browser to the form and back.
	b.do(chromedp.Navigate(ts.URL + "/admin/webhooks"))
	b.waitFor(`document.querySelector("#email") !== null`, 15*time.Second)
	require.Contains(t, b.location(), "/admin/login?next=%2Fadmin%2Fwebhooks")
	require.Empty(t, b.unlabelled(), "the sign-in form labels every field")
	b.snap("login")
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS(`a[href="/admin/webhooks/new"]`)))
	require.Equal(t, ts.URL+"/admin/webhooks", b.location())
	require.Contains(t, b.text("nav"), "Integrations")
	b.snap("webhooks")

	// Create an endpoint pointing at the loopback receiver.
	b.do(
		chromedp.Click(chromedp.CSS(`a[href="/admin/webhooks/new"]`)),
		chromedp.WaitVisible(chromedp.CSS("#url")),
	)
	require.Empty(t, b.unlabelled(), "the create form labels every field")
	b.snap("webhook-new")
	b.do(
		chromedp.SendKeys(chromedp.CSS("#url"), sink.URL+"/hook"),
		chromedp.SendKeys(chromedp.CSS("#description"), "browser e2e receiver"),
		chromedp.Click(chromedp.CSS(`input[name="event_types"][value="webhook.test"]`)),
		chromedp.SendKeys(chromedp.CSS("#headers"), "X-Team: e2e"),
		chromedp.Click(chromedp.CSS(`form[action="/admin/webhooks"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#secret")),
	)
	secret := b.inputValue("#secret")
	require.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	b.snap("webhook-secret")
	// The page put the endpoint's own URL in the history: a reload shows the
	// endpoint, never the secret again.
	endpointURL := b.location()
	require.Regexp(t, regexp.MustCompile(`/admin/webhooks/[0-9a-f-]{36}$`), endpointURL)
	b.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.NotContains(t, b.html(), secret)
	require.Equal(t, endpointURL, b.location())
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.NotContains(t, b.html(), secret)
	require.Contains(t, b.html(), sink.URL+"/hook")

	// Send a test and watch its delivery row appear (the page refreshes the
	// log itself while the delivery is in flight).
	b.do(
		chromedp.Navigate(endpointURL),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/test"] button`)),
		chromedp.Click(chromedp.CSS(`form[action$="/test"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	b.waitFor(`document.querySelector('tr.delivery[data-state="completed"]') !== null`, 60*time.Second)
	b.snap("webhook-delivered")
	row := b.innerText("tr.delivery")
	require.Contains(t, row, "webhook.test")
	require.Contains(t, row, "204")
	got := sink.all()
	require.Len(t, got, 1)
	key, err := standardwebhooks.ParseSecret(secret)
	require.NoError(t, err)
	verifier, err := standardwebhooks.NewVerifier(5*time.Minute, key)
	require.NoError(t, err)
	_, _, err = verifier.Verify(got[0].Header, got[0].Body, time.Now())
	require.NoError(t, err, "the receiver verifies the delivery with the secret the page showed")
	require.Equal(t, "e2e", got[0].Header.Get("X-Team"))

	// Its task link opens the job on the owner's own job page (River's UI
	// is the operator's).
	href := b.attribute(`tr.delivery a[href^="/admin/tasks"]`, "href")
	require.Regexp(t, `^/admin/tasks\?job=\d+$`, href)
	job := strings.TrimPrefix(href, "/admin/tasks?job=")
	b.do(chromedp.Click(chromedp.CSS(`tr.delivery a[href^="/admin/tasks"]`)))
	b.waitFor(`location.pathname === "/admin/jobs/`+job+`"`, 15*time.Second)
	b.waitFor(`document.body.innerText.includes("webhook.deliver") && document.querySelector("#job-state").dataset.state === "completed"`, 60*time.Second)
	b.snap("task")
	// The job page leads back to the delivery's attempts, its endpoint and its event.
	links := value(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#job-links a")].map(a => a.getAttribute("href"))`))
	endpointPath := strings.TrimPrefix(endpointURL, ts.URL)
	require.Len(t, links, 3)
	require.Equal(t, endpointPath+"/deliveries/"+job, links[0])
	require.Equal(t, endpointPath, links[1])
	require.Regexp(t, `^/admin/events/[0-9a-f-]{36}$`, links[2])
	b.do(chromedp.Click(chromedp.CSS(`#job-links a[href^="/admin/events/"]`)), chromedp.WaitVisible(chromedp.CSS("#event-deliveries")))
	require.Contains(t, b.html(), `href="`+endpointPath+`/deliveries/`+job+`"`, "the event page links the delivery's attempts")

	// Disable (it asks first), then enable again.
	b.do(
		chromedp.Navigate(endpointURL),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/disable"] button`)),
		chromedp.Click(chromedp.CSS(`form[action$="/disable"] button`)),
	)
	b.confirmStep("Nothing is sent to it until it is enabled again")
	b.do(chromedp.WaitVisible(chromedp.CSS(`form[action$="/enable"] button`)))
	require.Contains(t, b.innerText("#endpoint-state"), "Disabled")
	var ep struct {
		Enabled bool `json:"enabled"`
	}
	apiGet(t, ts, o.Key, "/api/admin"+strings.TrimPrefix(endpointURL, ts.URL+"/admin"), &ep)
	require.False(t, ep.Enabled)
	b.snap("webhook-disabled")
	b.do(
		chromedp.Click(chromedp.CSS(`form[action$="/enable"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/disable"] button`)),
	)
	require.Contains(t, b.innerText("#endpoint-state"), "Enabled")
	apiGet(t, ts, o.Key, "/api/admin"+strings.TrimPrefix(endpointURL, ts.URL+"/admin"), &ep)
	require.True(t, ep.Enabled)

	// Readable at phone width: nothing scrolls sideways.
	b.do(chromedp.EmulateViewport(390, 844), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.True(t, b.fitsWidth(), "the endpoint page scrolls sideways at 390 px")
	b.snap("webhook-phone")
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks/new"), chromedp.WaitVisible(chromedp.CSS("#url")))
	require.True(t, b.fitsWidth(), "the create form scrolls sideways at 390 px")
	b.do(desktopViewport())

	// An inbound source, a message to it, its dead letter replayed.
	b.do(
		chromedp.Navigate(ts.URL+"/admin/inbound"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/admin/inbound/new"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/admin/inbound/new"]`)),
		chromedp.WaitVisible(chromedp.CSS("#name")),
	)
	require.Empty(t, b.unlabelled(), "the source form labels every field")
	b.snap("inbound-new")
	b.do(
		chromedp.SendKeys(chromedp.CSS("#name"), "Billing provider"),
		chromedp.Click(chromedp.CSS(`input[name="verifier"][value="standard-webhooks"]`)),
		chromedp.Click(chromedp.CSS(`form[action="/admin/inbound"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#secret")),
	)
	sourceSecret := b.inputValue("#secret")
	receiveURL := b.inputValue("#receive-url")
	require.True(t, strings.HasPrefix(sourceSecret, "whsec_"))
	require.Regexp(t, `^`+regexp.QuoteMeta(ts.URL)+`/hooks/[0-9a-f-]{36}$`, receiveURL)
	b.snap("inbound-secret")
	sourceURL := b.location()
	sourceID := strings.TrimPrefix(sourceURL, ts.URL+"/admin/inbound/")
	require.NoError(t, uuid.Validate(sourceID))
	b.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#messages")))
	require.NotContains(t, b.html(), sourceSecret)

	skey, err := standardwebhooks.ParseSecret(sourceSecret)
	require.NoError(t, err)
	body := []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)
	req, err := http.NewRequest(http.MethodPost, receiveURL, strings.NewReader(string(body)))
	require.NoError(t, err)
	now := time.Now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", "msg_browser_e2e_1")
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", standardwebhooks.Sign(skey, "msg_browser_e2e_1", now, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	type messages struct {
		Data []struct {
			ID        string  `json:"id"`
			State     string  `json:"state"`
			Replays   int     `json:"replays"`
			LastError *string `json:"last_error"`
		} `json:"data"`
	}
	msgsPath := "/api/admin/inbound-sources/" + sourceID + "/messages"
	require.Eventually(t, func() bool {
		var m messages
		apiGet(t, ts, o.Key, msgsPath, &m)
		return len(m.Data) == 1 && m.Data[0].State == "done"
	}, 30*time.Second, 50*time.Millisecond, "the message was never processed")
	// This server has no handler that fails on demand, so the test leaves the
	// message as a handler that failed for good would: dead, with its error.
	_, err = ts.App.Pool.Exec(context.Background(),
		`UPDATE inbound_messages SET state = 'dead', dead_at = now(), done_at = NULL, last_error = 'browser e2e: handler failed for good' WHERE source_id = $1`, sourceID)
	require.NoError(t, err)

	b.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("tr.dead-letter")))
	require.Contains(t, b.innerText("tr.dead-letter"), "handler failed for good")
	b.snap("dead-letter")
	b.do(
		chromedp.Click(chromedp.CSS("tr.dead-letter button")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	b.waitFor(`document.querySelector("tr.dead-letter") === null && document.querySelector('tr.message[data-state="done"]') !== null`, 60*time.Second)
	b.snap("dead-letter-replayed")
	var after messages
	apiGet(t, ts, o.Key, msgsPath, &after)
	require.Len(t, after.Data, 1)
	require.Equal(t, "done", after.Data[0].State)
	require.Equal(t, 1, after.Data[0].Replays)

	// A poisoned event, released.
	var eventID uuid.UUID
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
		`UPDATE events SET poisoned_at = now(), relay_attempts = 5, relay_error = 'browser e2e: subscriber lookup failed'
		 WHERE id = (SELECT id FROM events WHERE owner_id = $1 AND type = 'owner.login' ORDER BY seq LIMIT 1) RETURNING id`, o.ID).Scan(&eventID))
	b.do(
		chromedp.Navigate(ts.URL+"/admin/events/poisoned"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-event="`+eventID.String()+`"]`)),
	)
	b.snap("poisoned")
	b.do(
		chromedp.Click(chromedp.CSS(`tr[data-event="`+eventID.String()+`"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	require.Contains(t, b.html(), "No poisoned events")

	// Sign out; the task link then asks for the sign-in again and comes back
	// to the job afterwards (the form honours next).
	b.do(
		chromedp.Click(chromedp.CSS(`form[action="/admin/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.Navigate(ts.URL+"/admin/tasks?job="+job),
		chromedp.WaitVisible(chromedp.CSS("#email")),
	)
	require.Contains(t, b.location(), "/admin/login?next=")
	b.login(ts, o)
	b.waitFor(`location.pathname === "/admin/jobs/`+job+`"`, 15*time.Second)
	b.waitFor(`document.body.innerText.includes("webhook.deliver")`, 60*time.Second)
}
