package trackway

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

type vectorFile struct {
	ToleranceSeconds int `json:"tolerance_seconds"`
	Vectors          []struct {
		Name    string            `json:"name"`
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
		Secrets []string          `json:"secrets"`
		Now     int64             `json:"now"`
		Expect  string            `json:"expect"`
	} `json:"vectors"`
}

func loadVectors(t *testing.T) vectorFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "webhook-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file vectorFile
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	return file
}

// Every vector of the shared file clients/webhook-vectors.json.
func TestSharedWebhookVectors(t *testing.T) {
	file := loadVectors(t)
	if len(file.Vectors) < 10 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		v := v
		t.Run(v.Name, func(t *testing.T) {
			headers := http.Header{}
			for k, value := range v.Headers {
				headers.Add(k, value)
			}
			payload, err := VerifyWebhookWithOptions([]byte(v.Body), headers, v.Secrets, WebhookOptions{
				Tolerance: time.Duration(file.ToleranceSeconds) * time.Second,
				Now:       time.Unix(v.Now, 0),
			})
			if v.Expect == "ok" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var want WebhookPayload
				_ = json.Unmarshal([]byte(v.Body), &want)
				if !reflect.DeepEqual(*payload, want) {
					t.Fatalf("payload %+v, want %+v", *payload, want)
				}
				return
			}
			var refused *WebhookVerificationError
			if !errors.As(err, &refused) {
				t.Fatalf("want %s, got %v", v.Expect, err)
			}
			if refused.Code != v.Expect || refused.Message == "" {
				t.Fatalf("want %s, got %s (%s)", v.Expect, refused.Code, refused.Message)
			}
		})
	}
}

// A hand-built http.Header whose keys are not canonical still works.
func TestNonCanonicalHeaderKeys(t *testing.T) {
	v := loadVectors(t).Vectors[0]
	headers := http.Header{}
	for k, value := range v.Headers {
		headers[k] = []string{value}
	}
	if _, err := VerifyWebhookWithOptions([]byte(v.Body), headers, v.Secrets, WebhookOptions{Now: time.Unix(v.Now, 0)}); err != nil {
		t.Fatal(err)
	}
}

// VerifyWebhook checks against the current time: the vector, signed long ago, is too old.
func TestDefaultNowIsTheClock(t *testing.T) {
	v := loadVectors(t).Vectors[0]
	headers := http.Header{}
	for k, value := range v.Headers {
		headers.Add(k, value)
	}
	_, err := VerifyWebhook([]byte(v.Body), headers, v.Secrets)
	var refused *WebhookVerificationError
	if !errors.As(err, &refused) || refused.Code != ErrCodeTimestampOutOfTolerance {
		t.Fatalf("got %v", err)
	}
	if _, err := VerifyWebhook([]byte(v.Body), headers, nil); err == nil {
		t.Fatal("no secret must be an error")
	}
}
