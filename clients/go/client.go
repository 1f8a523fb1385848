// Package trackway is Trackway's official Go client (standard library only): batched,
// gzipped event tracking with per-event outcomes, the API's pixels and events, and webhook
// verification.
//
//	c := trackway.NewClient(os.Getenv("TRACKWAY_API_KEY"), "http://127.0.0.1:8080")
//	defer c.Close(context.Background())
//	results, _ := c.Track(ctx, trackway.Event{PixelID: "px_…", EventName: "Purchase"})
package trackway

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const userAgent = "trackway-go/0.1.0"

// Client talks to one Trackway server. Safe for concurrent use; one per process is enough.
// Close it before the program exits: Go has no exit hook, and Close sends what is queued.
type Client struct {
	apiKey  string
	baseURL string
	http    *http.Client
	timeout time.Duration
	retry   retryPolicy
	logger  *log.Logger
	batch   *batcher
}

type settings struct {
	httpClient    *http.Client
	timeout       time.Duration
	retry         retryPolicy
	logger        *log.Logger
	maxBatchSize  int
	flushInterval time.Duration
	concurrency   int
	maxQueue      int
	gzip          bool
	onResult      func(TrackResult, Event)
}

// Option changes a Client's defaults.
type Option func(*settings)

// WithHTTPClient sends through h (its own Timeout, if any, applies as well).
func WithHTTPClient(h *http.Client) Option { return func(s *settings) { s.httpClient = h } }

// WithTimeout bounds each request (default 30 s).
func WithTimeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// WithMaxRetries sets the retries after the first attempt (default 10).
func WithMaxRetries(n int) Option { return func(s *settings) { s.retry.maxRetries = n } }

// WithBackoff sets the first backoff step (doubled each retry, default 200 ms) and the longest
// (default 10 s). Each wait is jittered between half the step and the step.
func WithBackoff(base, max time.Duration) Option {
	return func(s *settings) { s.retry.baseDelay, s.retry.maxDelay = base, max }
}

// WithLogger logs retries and failures to l (default: nothing is logged).
func WithLogger(l *log.Logger) Option { return func(s *settings) { s.logger = l } }

// WithMaxBatchSize sets the events per batch, 1 to 1,000 (default 100).
func WithMaxBatchSize(n int) Option { return func(s *settings) { s.maxBatchSize = n } }

// WithFlushInterval sets the most time an event waits for its batch to fill (default 1 s).
func WithFlushInterval(d time.Duration) Option { return func(s *settings) { s.flushInterval = d } }

// WithMaxConcurrentRequests sets the batches in flight at once (default 1).
func WithMaxConcurrentRequests(n int) Option { return func(s *settings) { s.concurrency = n } }

// WithMaxQueue bounds the events queued or in flight (default 100,000); Track blocks while it
// is full, until its context ends.
func WithMaxQueue(n int) Option { return func(s *settings) { s.maxQueue = n } }

// WithGzip turns batch compression on or off (default on).
func WithGzip(on bool) Option { return func(s *settings) { s.gzip = on } }

// WithResultCallback calls f once per tracked event with its outcome (also sent on the
// channel Track returns), from the sending goroutine.
func WithResultCallback(f func(TrackResult, Event)) Option {
	return func(s *settings) { s.onResult = f }
}

// NewClient makes a client for the server at baseURL (its origin, without /v1).
func NewClient(apiKey, baseURL string, opts ...Option) *Client {
	s := settings{
		httpClient:    &http.Client{Transport: http.DefaultTransport},
		timeout:       30 * time.Second,
		retry:         retryPolicy{maxRetries: 10, baseDelay: 200 * time.Millisecond, maxDelay: 10 * time.Second},
		maxBatchSize:  100,
		flushInterval: time.Second,
		concurrency:   1,
		maxQueue:      100_000,
		gzip:          true,
	}
	for _, opt := range opts {
		opt(&s)
	}
	if s.maxBatchSize < 1 {
		s.maxBatchSize = 1
	}
	if s.maxBatchSize > maxBatchEvents {
		s.maxBatchSize = maxBatchEvents
	}
	if s.concurrency < 1 {
		s.concurrency = 1
	}
	if s.maxQueue < 1 {
		s.maxQueue = 1
	}
	c := &Client{
		apiKey:  apiKey,
		baseURL: strings.TrimRight(baseURL, "/"),
		http:    s.httpClient,
		timeout: s.timeout,
		retry:   s.retry,
		logger:  s.logger,
	}
	c.batch = &batcher{
		c:         c,
		max:       s.maxBatchSize,
		interval:  s.flushInterval,
		gzip:      s.gzip,
		onResult:  s.onResult,
		slots:     make(chan struct{}, s.maxQueue),
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		unsettled: map[*item]struct{}{},
		senders:   s.concurrency,
	}
	return c
}

func (c *Client) logf(format string, args ...any) {
	if c.logger != nil {
		c.logger.Printf(format, args...)
	}
}

// Track queues e for the next batch and returns a channel that receives its outcome once
// the batch is answered (a refused event is an outcome with OK false, not an error). An
// EventID is made when e has none, so a resent batch is deduplicated by the server. The
// error is for a closed client, an event that cannot be encoded, or ctx ending while the
// queue is full.
func (c *Client) Track(ctx context.Context, e Event) (<-chan TrackResult, error) {
	return c.batch.enqueue(ctx, e)
}

// Flush sends everything queued now and returns the outcomes of every event tracked before,
// in tracking order (those settled so far, with ctx's error, if ctx ends first).
func (c *Client) Flush(ctx context.Context) ([]TrackResult, error) {
	return c.batch.flush(ctx)
}

// Close flushes, stops the senders and refuses further Track calls.
func (c *Client) Close(ctx context.Context) ([]TrackResult, error) {
	results, err := c.batch.close(ctx)
	if t, ok := c.http.Transport.(*http.Transport); ok && t != http.DefaultTransport {
		t.CloseIdleConnections()
	}
	return results, err
}

// PendingEvents counts the events queued or in flight.
func (c *Client) PendingEvents() int { return c.batch.pending() }

// Do sends any request to the API and decodes its JSON answer into out (unless nil). An error
// answer is an *APIError; no answer a *NetworkError. retryServerErrors: whether a 5xx or
// network failure may be resent (not for an operation that creates something).
func (c *Client) Do(ctx context.Context, method, path string, body any, out any, retryServerErrors bool) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	ex, err := c.exchange(ctx, method, path, data, nil, retryServerErrors)
	if err != nil {
		return err
	}
	if out == nil || len(ex.body) == 0 {
		return nil
	}
	return json.Unmarshal(ex.body, out)
}

// Validate returns what Track would store for e and what each destination would be sent,
// storing and sending nothing.
func (c *Client) Validate(ctx context.Context, e Event) (*Validation, error) {
	var out Validation
	return &out, c.Do(ctx, "POST", "/v1/track/validate", e, &out, true)
}

// CreatePixel creates a pixel (Name and Domain required). Not resent on a 5xx or network
// error: a resent create could create twice.
func (c *Client) CreatePixel(ctx context.Context, p PixelParams) (*Pixel, error) {
	var out Pixel
	return &out, c.Do(ctx, "POST", "/v1/pixels", p, &out, false)
}

// GetPixel reads one pixel.
func (c *Client) GetPixel(ctx context.Context, pixelID string) (*Pixel, error) {
	var out Pixel
	return &out, c.Do(ctx, "GET", "/v1/pixels/"+url.PathEscape(pixelID), nil, &out, true)
}

// ListPixels reads one page of pixels (limit 0: the server's default).
func (c *Client) ListPixels(ctx context.Context, limit, offset int) (*PixelList, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	var out PixelList
	return &out, c.Do(ctx, "GET", withQuery("/v1/pixels", q), nil, &out, true)
}

// UpdatePixel changes the non-empty fields of p.
func (c *Client) UpdatePixel(ctx context.Context, pixelID string, p PixelParams) (*Pixel, error) {
	var out Pixel
	return &out, c.Do(ctx, "PATCH", "/v1/pixels/"+url.PathEscape(pixelID), p, &out, true)
}

// ListEvents reads one page of a pixel's events, newest first.
func (c *Client) ListEvents(ctx context.Context, pixelID string, p ListEventsParams) (*EventList, error) {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	for k, v := range map[string]string{"start_date": p.StartDate, "end_date": p.EndDate, "event_name": p.EventName} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out EventList
	return &out, c.Do(ctx, "GET", withQuery("/v1/pixels/"+url.PathEscape(pixelID)+"/events", q), nil, &out, true)
}

// Event reads one stored event.
func (c *Client) Event(ctx context.Context, pixelID, eventID string) (*EventRecord, error) {
	var out EventRecord
	path := "/v1/pixels/" + url.PathEscape(pixelID) + "/events/" + url.PathEscape(eventID)
	return &out, c.Do(ctx, "GET", path, nil, &out, true)
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// EventIterator walks every matching event across all pages, newest first:
//
//	it := c.IterateEvents(ctx, pixelID, trackway.ListEventsParams{Limit: 100})
//	for it.Next() { e := it.Event(); … }
//	if err := it.Err(); err != nil { … }
type EventIterator struct {
	c        *Client
	ctx      context.Context
	pixelID  string
	params   ListEventsParams
	page     []EventRecord
	index    int
	previous map[string]bool
	current  map[string]bool
	done     bool
	err      error
	event    EventRecord
}

// IterateEvents returns an iterator over every matching event; pages are fetched as it asks.
func (c *Client) IterateEvents(ctx context.Context, pixelID string, p ListEventsParams) *EventIterator {
	return &EventIterator{c: c, ctx: ctx, pixelID: pixelID, params: p, index: -1, previous: map[string]bool{}}
}

// Next advances to the next event; false at the end or on an error (see Err).
func (it *EventIterator) Next() bool {
	for {
		if it.err != nil {
			return false
		}
		it.index++
		if it.index < len(it.page) {
			e := it.page[it.index]
			// Events stored while the loop runs push older ones down a page: skip those the
			// previous page already gave.
			if it.previous[e.EventID] {
				continue
			}
			it.event = e
			return true
		}
		if it.done {
			return false
		}
		list, err := it.c.ListEvents(it.ctx, it.pixelID, it.params)
		if err != nil {
			it.err = err
			return false
		}
		it.previous = it.current
		it.current = map[string]bool{}
		for _, e := range list.Events {
			it.current[e.EventID] = true
		}
		it.page, it.index = list.Events, -1
		it.params.Offset += len(list.Events)
		if len(list.Events) == 0 || it.params.Offset >= list.Total {
			it.done = true
		}
	}
}

// Event is the current event.
func (it *EventIterator) Event() EventRecord { return it.event }

// Err is the error that ended the iteration, if any.
func (it *EventIterator) Err() error { return it.err }

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == 404
}
