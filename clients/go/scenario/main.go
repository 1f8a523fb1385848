// Command scenario is the shared scenario's driver (test/clients.process.test.ts), not part of
// the package: `scenario <track|iterate|verify|get>`. Environment: TRACKWAY_URL,
// TRACKWAY_API_KEY, PIXEL_ID, COUNT, EVENT_ID. Prints one JSON object on its last line.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	trackway "github.com/trackway/trackway-go"
)

func client() *trackway.Client {
	// Survives a server that is down for ~10 s: up to 10 retries, backoff capped at 2 s.
	return trackway.NewClient(os.Getenv("TRACKWAY_API_KEY"), os.Getenv("TRACKWAY_URL"),
		trackway.WithMaxRetries(10),
		trackway.WithBackoff(200*time.Millisecond, 2*time.Second),
		trackway.WithLogger(log.New(os.Stderr, "", log.LstdFlags)),
	)
}

func run(step string) (any, error) {
	ctx := context.Background()
	pixelID := os.Getenv("PIXEL_ID")
	switch step {
	case "track":
		count, err := strconv.Atoi(os.Getenv("COUNT"))
		if err != nil {
			return nil, err
		}
		started := time.Now()
		c := client()
		outcomes := make([]<-chan trackway.TrackResult, 0, count)
		for i := 0; i < count; i++ {
			ch, err := c.Track(ctx, trackway.Event{PixelID: pixelID, EventName: "Purchase", Value: trackway.Float(float64(i)), Currency: "USD"})
			if err != nil {
				return nil, err
			}
			outcomes = append(outcomes, ch)
		}
		if _, err := c.Close(ctx); err != nil {
			return nil, err
		}
		seconds := time.Since(started).Seconds() // Track + Close, for bench/clients.ts
		ok, failed, messages := 0, 0, []string{}
		for _, ch := range outcomes {
			r := <-ch
			if r.OK {
				ok++
				continue
			}
			failed++
			if len(messages) < 5 {
				messages = append(messages, fmt.Sprintf("%d %s: %s", r.Status, r.Error, r.Message))
			}
		}
		return map[string]any{"ok": ok, "failed": failed, "errors": messages, "seconds": seconds}, nil
	case "iterate":
		c := client()
		defer c.Close(ctx)
		it := c.IterateEvents(ctx, pixelID, trackway.ListEventsParams{Limit: 100})
		count, distinct := 0, map[string]bool{}
		for it.Next() {
			count++
			distinct[it.Event().EventID] = true
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		return map[string]any{"count": count, "distinct_event_ids": len(distinct)}, nil
	case "verify":
		var input struct {
			Body    string            `json:"body"`
			Headers map[string]string `json:"headers"`
			Secrets []string          `json:"secrets"`
		}
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &input); err != nil {
			return nil, err
		}
		headers := http.Header{}
		for k, v := range input.Headers {
			headers.Add(k, v)
		}
		payload, err := trackway.VerifyWebhook([]byte(input.Body), headers, input.Secrets)
		var refused *trackway.WebhookVerificationError
		if errors.As(err, &refused) {
			return map[string]any{"ok": false, "code": refused.Code, "message": refused.Message}, nil
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"ok": true, "event": payload.Event}, nil
	case "get":
		c := client()
		defer c.Close(ctx)
		e, err := c.Event(ctx, pixelID, os.Getenv("EVENT_ID"))
		if err != nil {
			return nil, err
		}
		return map[string]any{"event_id": e.EventID, "event_name": e.EventName}, nil
	}
	return nil, fmt.Errorf("unknown step %q", step)
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: scenario track|iterate|verify|get")
	}
	out, err := run(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	data, _ := json.Marshal(out)
	fmt.Println(string(data))
}
