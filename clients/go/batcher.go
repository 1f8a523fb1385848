package trackway

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"
)

// The server takes at most 1,000 events and 524,288 decoded bytes a batch; keep under both.
const (
	maxBatchEvents = 1000
	maxBatchBytes  = 500_000
)

// NewEventID returns "evt_" + a UUIDv7: time-ordered (kind to the server's indexes) with 74
// random bits.
func NewEventID() string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic("trackway: crypto/rand failed: " + err.Error())
	}
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(time.Now().UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	h := hex.EncodeToString(b[:])
	return "evt_" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

type item struct {
	seq    uint64
	id     string
	json   []byte
	event  Event
	at     time.Time
	result TrackResult
	out    chan TrackResult // buffered 1: the caller's
	done   chan struct{}    // closed once settled
}

// batcher is the queue behind Track: events wait until a batch is full (by count or bytes),
// the flush interval passes, or Flush/Close asks; each batch goes to POST /v1/track/batch,
// gzipped, from background goroutines. Every event carries an event_id before it is queued,
// so resending a batch whose answer was lost stores nothing twice.
type batcher struct {
	c         *Client
	max       int
	interval  time.Duration
	gzip      bool
	onResult  func(TrackResult, Event)
	slots     chan struct{} // bounds what may wait; Track blocks (or its ctx ends) when full
	wake      chan struct{}
	stop      chan struct{}
	mu        sync.Mutex
	queue     []*item
	unsettled map[*item]struct{}
	flushing  bool
	stopping  bool
	started   bool
	senders   int
	seq       uint64
	wg        sync.WaitGroup
}

var errClosed = errors.New("trackway: Track after Close")

func (b *batcher) enqueue(ctx context.Context, e Event) (<-chan TrackResult, error) {
	if e.EventID == "" {
		e.EventID = NewEventID()
	}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	it := &item{id: e.EventID, json: data, event: e, at: time.Now(), out: make(chan TrackResult, 1), done: make(chan struct{})}
	b.mu.Lock()
	if b.stopping {
		b.mu.Unlock()
		<-b.slots
		return nil, errClosed
	}
	if !b.started {
		b.started = true
		for i := 0; i < b.senders; i++ {
			b.wg.Add(1)
			go b.run()
		}
	}
	b.seq++
	it.seq = b.seq
	b.queue = append(b.queue, it)
	b.unsettled[it] = struct{}{}
	n := len(b.queue)
	b.mu.Unlock()
	if n == 1 || n >= b.max {
		b.signal()
	}
	return it.out, nil
}

func (b *batcher) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *batcher) pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.unsettled)
}

// flush sends what is queued now and waits for the outcome of every event tracked before.
func (b *batcher) flush(ctx context.Context) ([]TrackResult, error) {
	b.mu.Lock()
	waiting := make([]*item, 0, len(b.unsettled))
	for it := range b.unsettled {
		waiting = append(waiting, it)
	}
	if len(b.queue) > 0 {
		b.flushing = true
	}
	b.mu.Unlock()
	b.signal()
	// In tracking order, as the caller made them.
	sortItems(waiting)
	results := make([]TrackResult, 0, len(waiting))
	for _, it := range waiting {
		select {
		case <-it.done:
			results = append(results, it.result)
		case <-ctx.Done():
			return results, ctx.Err()
		}
	}
	return results, nil
}

func (b *batcher) close(ctx context.Context) ([]TrackResult, error) {
	b.mu.Lock()
	already := b.stopping
	b.stopping = true
	b.mu.Unlock()
	if !already {
		close(b.stop)
	}
	results, err := b.flush(ctx)
	if err != nil {
		return results, err
	}
	finished := make(chan struct{})
	go func() { b.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return results, nil
	case <-ctx.Done():
		return results, ctx.Err()
	}
}

// next blocks until a batch is due; nil when stopping with nothing left.
func (b *batcher) next() []*item {
	for {
		b.mu.Lock()
		if n := len(b.queue); n > 0 {
			waited := time.Since(b.queue[0].at)
			if waited >= b.interval {
				b.flushing = true
			}
			if n >= b.max || b.flushing || b.stopping {
				batch := b.take()
				if len(b.queue) == 0 {
					b.flushing = false
				}
				more := len(b.queue) > 0
				b.mu.Unlock()
				if more {
					b.signal() // another sender may take the rest
				}
				return batch
			}
			b.mu.Unlock()
			timer := time.NewTimer(b.interval - waited)
			select {
			case <-b.wake:
			case <-b.stop:
			case <-timer.C:
			}
			timer.Stop()
			continue
		}
		stopping := b.stopping
		b.mu.Unlock()
		if stopping {
			return nil
		}
		select {
		case <-b.wake:
		case <-b.stop:
		}
	}
}

func (b *batcher) take() []*item {
	size := 12
	count := 0
	for count < len(b.queue) && count < b.max {
		next := len(b.queue[count].json) + 1
		if count > 0 && size+next > maxBatchBytes {
			break
		}
		size += next
		count++
	}
	batch := make([]*item, count)
	copy(batch, b.queue[:count])
	b.queue = append(b.queue[:0:0], b.queue[count:]...)
	return batch
}

func (b *batcher) run() {
	defer b.wg.Done()
	for {
		batch := b.next()
		if batch == nil {
			return
		}
		b.send(batch)
	}
}

func (b *batcher) settle(it *item, result TrackResult) {
	it.result = result
	b.mu.Lock()
	delete(b.unsettled, it)
	b.mu.Unlock()
	it.out <- result
	close(it.done)
	<-b.slots
	if b.onResult != nil {
		func() {
			// A panicking callback must not stop the sender; it is the caller's code to fix.
			defer func() {
				if r := recover(); r != nil {
					b.c.logf("trackway: result callback panicked: %v", r)
				}
			}()
			b.onResult(result, it.event)
		}()
	}
}

func (b *batcher) fail(items []*item, status int, code, message, field string) {
	for _, it := range items {
		b.settle(it, TrackResult{EventID: it.id, Status: status, Error: code, Message: message, Field: field})
	}
}

type batchSlot struct {
	Status       int      `json:"status"`
	EventID      string   `json:"event_id"`
	Message      string   `json:"message"`
	Deduplicated bool     `json:"deduplicated"`
	Warnings     []string `json:"warnings"`
	Error        string   `json:"error"`
	Field        string   `json:"field"`
}

// send sends batch until every event in it has a final answer. Events answered 500 in their
// slot ("not stored; safe to retry") are sent again with the same ids.
func (b *batcher) send(batch []*item) {
	waiting := batch
	ctx := context.Background()
	for round := 0; len(waiting) > 0; round++ {
		var raw bytes.Buffer
		raw.WriteString(`{"events":[`)
		for i, it := range waiting {
			if i > 0 {
				raw.WriteByte(',')
			}
			raw.Write(it.json)
		}
		raw.WriteString(`]}`)
		body := raw.Bytes()
		headers := map[string]string{}
		if b.gzip {
			var zipped bytes.Buffer
			w, _ := gzip.NewWriterLevel(&zipped, gzip.BestSpeed)
			_, _ = w.Write(body)
			_ = w.Close()
			body = zipped.Bytes()
			headers["Content-Encoding"] = "gzip"
		}
		ex, err := b.c.exchange(ctx, "POST", "/v1/track/batch", body, headers, true)
		if err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				if apiErr.Status == 413 && len(waiting) > 1 {
					// Bigger than the server takes after all: halve it and send both halves.
					half := (len(waiting) + 1) / 2
					b.send(waiting[:half])
					b.send(waiting[half:])
					return
				}
				b.fail(waiting, apiErr.Status, apiErr.Code, apiErr.Message, apiErr.Field)
			} else {
				b.fail(waiting, 0, "Network error", err.Error(), "")
			}
			return
		}
		var answer struct {
			Results []batchSlot `json:"results"`
		}
		_ = json.Unmarshal(ex.body, &answer)
		var retry []*item
		for i, it := range waiting {
			if i >= len(answer.Results) {
				b.settle(it, TrackResult{EventID: it.id, Error: "Invalid response", Message: "No result for this event in the batch response"})
				continue
			}
			slot := answer.Results[i]
			switch {
			case slot.Status == 200:
				id := slot.EventID
				if id == "" {
					id = it.id
				}
				b.settle(it, TrackResult{OK: true, EventID: id, Status: 200, Message: slot.Message, Deduplicated: slot.Deduplicated, Warnings: slot.Warnings})
			case slot.Status >= 500 && round < b.c.retry.maxRetries:
				retry = append(retry, it)
			default:
				b.settle(it, TrackResult{EventID: it.id, Status: slot.Status, Message: slot.Message, Error: slot.Error, Field: slot.Field})
			}
		}
		waiting = retry
		if len(waiting) > 0 {
			time.Sleep(b.c.retry.backoff(round))
		}
	}
}

func sortItems(items []*item) {
	sort.Slice(items, func(i, j int) bool { return items[i].seq < items[j].seq })
}
