package trackway

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var eventIDPattern = regexp.MustCompile(`^evt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
	at           time.Time
}

func (r recorded) events(t *testing.T) []map[string]any {
	var body struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Events
}

// standIn is a real local HTTP server answering each request with respond; respond may
// hijack the connection and close it (no answer).
type standIn struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

func newStandIn(t *testing.T, respond func(w http.ResponseWriter, r recorded)) *standIn {
	s := &standIn{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var reader io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(req.Body)
			if err != nil {
				t.Error(err)
				return
			}
			reader = z
		}
		body, _ := io.ReadAll(reader)
		r := recorded{req.Method, req.URL.RequestURI(), req.Header, body, time.Now()}
		s.mu.Lock()
		s.requests = append(s.requests, r)
		s.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *standIn) batches() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recorded
	for _, r := range s.requests {
		if r.path == "/v1/track/batch" {
			out = append(out, r)
		}
	}
	return out
}

func reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func batchOK(t *testing.T) func(http.ResponseWriter, recorded) {
	return func(w http.ResponseWriter, r recorded) {
		events := r.events(t)
		results := make([]map[string]any, len(events))
		for i, e := range events {
			results[i] = map[string]any{"index": i, "status": 200, "success": true, "event_id": e["event_id"], "message": "Event tracked"}
		}
		reply(w, 200, map[string]any{"accepted": len(events), "deduplicated": 0, "rejected": 0, "results": results})
	}
}

func hangUp(w http.ResponseWriter) {
	conn, _, _ := w.(http.Hijacker).Hijack()
	conn.Close()
}

func newTestClient(t *testing.T, s *standIn, opts ...Option) *Client {
	opts = append([]Option{WithBackoff(5*time.Millisecond, 50*time.Millisecond)}, opts...)
	c := NewClient("tw_live_test", s.URL, opts...)
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return c
}

var ctx = context.Background()

func TestBatchesBySizeGzippedWithAnEventIDEach(t *testing.T) {
	s := newStandIn(t, batchOK(t))
	c := newTestClient(t, s, WithFlushInterval(time.Minute))
	var outs []<-chan TrackResult
	for i := 0; i < 250; i++ {
		ch, err := c.Track(ctx, Event{PixelID: "px_1", EventName: "Purchase", Value: Float(float64(i))})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, ch)
	}
	given, _ := c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead", EventID: "order-7"})
	results, err := c.Close(ctx)
	// Close returns the outcomes still outstanding when it was called.
	if err != nil || len(results) == 0 || len(results) > 251 {
		t.Fatalf("%d results, %v", len(results), err)
	}
	var sizes []int
	for _, b := range s.batches() {
		sizes = append(sizes, len(b.events(t)))
		if b.header.Get("Content-Encoding") != "gzip" || b.header.Get("Authorization") != "Bearer tw_live_test" {
			t.Fatalf("headers %v", b.header)
		}
	}
	if fmt.Sprint(sizes) != "[100 100 51]" {
		t.Fatalf("batch sizes %v", sizes)
	}
	seen := map[string]bool{}
	for i, ch := range outs {
		r := <-ch
		if !r.OK || r.Status != 200 || !eventIDPattern.MatchString(r.EventID) || seen[r.EventID] {
			t.Fatalf("event %d: %+v", i, r)
		}
		seen[r.EventID] = true
	}
	if r := <-given; r.EventID != "order-7" {
		t.Fatalf("given id replaced: %+v", r)
	}
	// Value 0 is sent (a pointer, not omitted).
	if v, ok := s.batches()[0].events(t)[0]["value"]; !ok || v.(float64) != 0 {
		t.Fatalf("first value %v", v)
	}
	if _, err := c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"}); err == nil {
		t.Fatal("Track after Close must fail")
	}
}

func TestTimeBoundSendsAPartialBatch(t *testing.T) {
	s := newStandIn(t, batchOK(t))
	c := newTestClient(t, s, WithFlushInterval(200*time.Millisecond))
	started := time.Now()
	ch, _ := c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	select {
	case r := <-ch:
		if !r.OK || time.Since(started) < 150*time.Millisecond {
			t.Fatalf("%+v after %v", r, time.Since(started))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not sent")
	}
}

func TestByteBoundSplitsLargeEvents(t *testing.T) {
	s := newStandIn(t, batchOK(t))
	c := newTestClient(t, s, WithMaxBatchSize(1000), WithFlushInterval(time.Minute))
	for i := 0; i < 40; i++ {
		_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead", CustomData: map[string]any{"note": strings.Repeat("x", 15000)}})
	}
	if _, err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.batches()) < 2 {
		t.Fatal("one batch over the byte bound")
	}
	for _, b := range s.batches() {
		if len(b.body) > maxBatchBytes {
			t.Fatalf("batch of %d bytes", len(b.body))
		}
	}
}

func TestResultCallbackAndPending(t *testing.T) {
	s := newStandIn(t, batchOK(t))
	var mu sync.Mutex
	var names []string
	c := newTestClient(t, s, WithFlushInterval(time.Minute), WithResultCallback(func(r TrackResult, e Event) {
		mu.Lock()
		names = append(names, e.EventName)
		mu.Unlock()
	}))
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "A"})
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "B"})
	if c.PendingEvents() != 2 {
		t.Fatalf("pending %d", c.PendingEvents())
	}
	// Close, not Flush: Flush returns once the outcomes are settled, which is just before the
	// sender calls the callback with them; Close also waits for the senders to finish.
	_, _ = c.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(names) != "[A B]" || c.PendingEvents() != 0 {
		t.Fatalf("%v, pending %d", names, c.PendingEvents())
	}
}

func TestTrackBlocksOnAFullQueueUntilItsContextEnds(t *testing.T) {
	// A's answer waits until the test ends (not a fixed 300 ms), so A holds the only slot
	// however late B comes.
	release := make(chan struct{})
	defer close(release)
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) { <-release; batchOK(t)(w, r) })
	c := newTestClient(t, s, WithMaxQueue(1), WithFlushInterval(time.Millisecond))
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "A"})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Track(short, Event{PixelID: "px_1", EventName: "B"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func Test429WaitsRetryAfterThenResendsTheSameIDs(t *testing.T) {
	calls := 0
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		calls++
		if calls == 1 {
			w.Header().Set("Retry-After", "1")
			reply(w, 429, map[string]any{"error": "Rate limit exceeded", "message": "slow down", "retry_after": 1})
			return
		}
		batchOK(t)(w, r)
	})
	c := newTestClient(t, s)
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	results, _ := c.Flush(ctx)
	if len(results) != 1 || !results[0].OK {
		t.Fatalf("%+v", results)
	}
	b := s.batches()
	if len(b) != 2 || b[1].at.Sub(b[0].at) < 950*time.Millisecond || string(b[0].body) != string(b[1].body) {
		t.Fatalf("%d batches, %v apart", len(b), b[1].at.Sub(b[0].at))
	}
}

func Test5xxAndDroppedConnectionsAreRetried(t *testing.T) {
	calls := 0
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		calls++
		switch calls {
		case 1:
			hangUp(w)
		case 2:
			reply(w, 503, map[string]any{"error": "Service unavailable", "message": "down"})
		default:
			batchOK(t)(w, r)
		}
	})
	c := newTestClient(t, s)
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	results, _ := c.Flush(ctx)
	b := s.batches()
	if !results[0].OK || len(b) != 3 || string(b[0].body) != string(b[2].body) {
		t.Fatalf("%+v after %d batches", results, len(b))
	}
}

func TestOther4xxIsNeverRetried(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		reply(w, 401, map[string]any{"error": "Unauthorized", "message": "Invalid API key"})
	})
	c := newTestClient(t, s)
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	results, _ := c.Flush(ctx)
	r := results[0]
	if r.OK || r.Status != 401 || r.Error != "Unauthorized" || r.Message != "Invalid API key" || len(s.batches()) != 1 {
		t.Fatalf("%+v, %d batches", r, len(s.batches()))
	}
}

func TestASlotAnswered500IsResentAlone(t *testing.T) {
	var rounds [][]string
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		var ids []string
		for _, e := range r.events(t) {
			ids = append(ids, e["event_id"].(string))
		}
		rounds = append(rounds, ids)
		if len(rounds) > 1 {
			batchOK(t)(w, r)
			return
		}
		reply(w, 200, map[string]any{"accepted": 1, "deduplicated": 0, "rejected": 2, "results": []map[string]any{
			{"index": 0, "status": 200, "success": true, "event_id": ids[0], "message": "Event tracked"},
			{"index": 1, "status": 500, "error": "Internal error", "message": "not stored; safe to retry"},
			{"index": 2, "status": 400, "error": "Invalid request", "message": "Invalid field: value must be a finite number", "field": "value"},
		}})
	})
	c := newTestClient(t, s, WithFlushInterval(time.Minute))
	for _, name := range []string{"A", "B", "C"} {
		_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: name})
	}
	results, _ := c.Flush(ctx)
	if !results[0].OK || !results[1].OK || results[2].OK || results[2].Field != "value" {
		t.Fatalf("%+v", results)
	}
	if len(rounds) != 2 || len(rounds[1]) != 1 || rounds[1][0] != rounds[0][1] {
		t.Fatalf("rounds %v", rounds)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		reply(w, 500, map[string]any{"error": "Internal error", "message": "boom"})
	})
	c := newTestClient(t, s, WithMaxRetries(2))
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	results, _ := c.Flush(ctx)
	if results[0].OK || results[0].Status != 500 || len(s.batches()) != 3 {
		t.Fatalf("%+v, %d batches", results[0], len(s.batches()))
	}
}

func Test413HalvesTheBatch(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		if len(r.events(t)) > 2 {
			reply(w, 413, map[string]any{"error": "Payload too large", "message": "too big"})
			return
		}
		batchOK(t)(w, r)
	})
	c := newTestClient(t, s, WithFlushInterval(time.Minute))
	for i := 0; i < 4; i++ {
		_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	}
	results, _ := c.Flush(ctx)
	var sizes []int
	for _, b := range s.batches() {
		sizes = append(sizes, len(b.events(t)))
	}
	if fmt.Sprint(sizes) != "[4 2 2]" || !results[3].OK {
		t.Fatalf("sizes %v, %+v", sizes, results)
	}
}

func TestTimeoutIsANetworkError(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) { time.Sleep(time.Second) })
	c := newTestClient(t, s, WithTimeout(200*time.Millisecond), WithMaxRetries(0))
	started := time.Now()
	_, err := c.GetPixel(ctx, "px_1")
	var netErr *NetworkError
	if !errors.As(err, &netErr) || !errors.Is(err, context.DeadlineExceeded) || time.Since(started) > 900*time.Millisecond {
		t.Fatalf("got %v after %v", err, time.Since(started))
	}
	_, _ = c.Track(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	results, _ := c.Flush(ctx)
	if results[0].OK || results[0].Status != 0 || results[0].Error != "Network error" {
		t.Fatalf("%+v", results[0])
	}
}

func TestAPIErrorsCarryCodeMessageFieldAndStatus(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		reply(w, 400, map[string]any{"error": "Invalid request", "message": "Invalid field: domain must be a hostname", "field": "domain"})
	})
	c := newTestClient(t, s)
	_, err := c.CreatePixel(ctx, PixelParams{Name: "Shop", Domain: "not a host"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "Invalid request" || apiErr.Field != "domain" ||
		apiErr.Message != "Invalid field: domain must be a hostname" {
		t.Fatalf("got %#v", err)
	}
}

func TestCreatesAreNotRetriedOn5xxButReadsAre(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		reply(w, 503, map[string]any{"error": "Service unavailable", "message": "down"})
	})
	c := newTestClient(t, s, WithMaxRetries(2))
	if _, err := c.CreatePixel(ctx, PixelParams{Name: "Shop", Domain: "shop.example.com"}); err == nil || len(s.requests) != 1 {
		t.Fatalf("%v after %d requests", err, len(s.requests))
	}
	if _, err := c.GetPixel(ctx, "px_1"); err == nil || len(s.requests) != 4 {
		t.Fatalf("%v after %d requests", err, len(s.requests))
	}
	if IsNotFound(errors.New("x")) {
		t.Fatal("IsNotFound")
	}
}

func TestIterateReadsEveryPage(t *testing.T) {
	var all []map[string]any
	for i := 0; i < 230; i++ {
		all = append(all, map[string]any{"event_id": "e" + strconv.Itoa(i), "event_name": "Lead"})
	}
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) {
		u, _ := http.NewRequest("GET", "http://x"+r.path, nil)
		q := u.URL.Query()
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		end := offset + limit
		if end > len(all) {
			end = len(all)
		}
		reply(w, 200, map[string]any{"events": all[offset:end], "total": len(all), "limit": limit, "offset": offset})
	})
	c := newTestClient(t, s)
	it := c.IterateEvents(ctx, "px_1", ListEventsParams{Limit: 100})
	var got []string
	for it.Next() {
		got = append(got, it.Event().EventID)
	}
	if it.Err() != nil || len(got) != 230 || got[229] != "e229" || len(s.requests) != 3 {
		t.Fatalf("%d events, %v, %d requests", len(got), it.Err(), len(s.requests))
	}
}

func TestPathsAndBodies(t *testing.T) {
	s := newStandIn(t, func(w http.ResponseWriter, r recorded) { reply(w, 200, map[string]any{}) })
	c := newTestClient(t, s)
	_, _ = c.Validate(ctx, Event{PixelID: "px_1", EventName: "Lead"})
	_, _ = c.Event(ctx, "px_1", "order/7")
	_, _ = c.UpdatePixel(ctx, "px_1", PixelParams{Status: "paused"})
	_, _ = c.ListPixels(ctx, 10, 0)
	var seen []string
	for _, r := range s.requests {
		seen = append(seen, r.method+" "+r.path+" "+strings.TrimSpace(string(r.body)))
	}
	want := []string{
		`POST /v1/track/validate {"pixel_id":"px_1","event_name":"Lead"}`,
		`GET /v1/pixels/px_1/events/order%2F7 `,
		`PATCH /v1/pixels/px_1 {"status":"paused"}`,
		`GET /v1/pixels?limit=10 `,
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(seen, "\n"))
	}
}
