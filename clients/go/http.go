package trackway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// retryPolicy: a 429 is retried after the retry_after the server names; a 5xx or network
// error after a jittered exponential backoff (when the operation is safe to resend); another
// 4xx never.
type retryPolicy struct {
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
}

var (
	jitterMu sync.Mutex
	jitter   = rand.New(rand.NewSource(time.Now().UnixNano()))
)

// backoff is "equal jitter": half the exponential step for sure, the other half random, so
// the retries of many clients spread out but none retries at once.
func (p retryPolicy) backoff(retry int) time.Duration {
	step := p.maxDelay
	if retry < 30 {
		if s := p.baseDelay << uint(retry); s > 0 && s < step {
			step = s
		}
	}
	jitterMu.Lock()
	r := jitter.Float64()
	jitterMu.Unlock()
	return step/2 + time.Duration(r*float64(step/2))
}

type exchange struct {
	status  int
	headers http.Header
	body    []byte
}

func retryAfter(ex *exchange) time.Duration {
	var body struct {
		RetryAfter *float64 `json:"retry_after"`
	}
	seconds := 1.0
	if json.Unmarshal(ex.body, &body) == nil && body.RetryAfter != nil {
		seconds = *body.RetryAfter
	} else if v, err := strconv.ParseFloat(ex.headers.Get("Retry-After"), 64); err == nil {
		seconds = v
	}
	if seconds < 1 {
		seconds = 1
	}
	return time.Duration(seconds * float64(time.Second))
}

func apiError(ex *exchange) *APIError {
	var body struct {
		Error      string `json:"error"`
		Message    string `json:"message"`
		Field      string `json:"field"`
		RetryAfter int    `json:"retry_after"`
	}
	_ = json.Unmarshal(ex.body, &body)
	e := &APIError{Status: ex.status, Code: body.Error, Message: body.Message, Field: body.Field, RetryAfter: body.RetryAfter}
	if e.Code == "" {
		e.Code = "HTTP " + strconv.Itoa(ex.status)
	}
	if e.Message == "" {
		e.Message = "HTTP " + strconv.Itoa(ex.status)
	}
	return e
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sendOnce makes one request with the client's timeout; a *NetworkError when no answer came.
func (c *Client) sendOnce(ctx context.Context, method, path string, body []byte, headers map[string]string) (*exchange, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, &NetworkError{Err: err}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, &NetworkError{Err: err}
	}
	return &exchange{status: res.StatusCode, headers: res.Header, body: data}, nil
}

// exchange sends until an answer that is final for this request: below 400, a 4xx other than
// 429, or a retryable failure once retries are spent (then returned as the error).
func (c *Client) exchange(ctx context.Context, method, path string, body []byte, headers map[string]string, retryServerErrors bool) (*exchange, error) {
	for retry := 0; ; retry++ {
		ex, err := c.sendOnce(ctx, method, path, body, headers)
		if err != nil {
			if ctx.Err() != nil || !retryServerErrors || retry >= c.retry.maxRetries {
				return nil, err
			}
			delay := c.retry.backoff(retry)
			c.logf("trackway: %s %s got no answer (%v); retry %d in %v", method, path, err, retry+1, delay)
			if err := sleep(ctx, delay); err != nil {
				return nil, &NetworkError{Err: err}
			}
			continue
		}
		if ex.status < 400 {
			return ex, nil
		}
		retryable := ex.status == 429 || (retryServerErrors && ex.status >= 500)
		if !retryable || retry >= c.retry.maxRetries {
			return nil, apiError(ex)
		}
		delay := c.retry.backoff(retry)
		if ex.status == 429 {
			delay = retryAfter(ex)
		}
		c.logf("trackway: %s %s answered %d; retry %d in %v", method, path, ex.status, retry+1, delay)
		if err := sleep(ctx, delay); err != nil {
			return nil, &NetworkError{Err: err}
		}
	}
}
