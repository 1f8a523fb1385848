package trackway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far webhook-timestamp may be from now, either way.
const DefaultWebhookTolerance = 5 * time.Minute

var timestampPattern = regexp.MustCompile(`^[0-9]{1,12}$`)

// WebhookOptions changes VerifyWebhookWithOptions' defaults.
type WebhookOptions struct {
	// Tolerance defaults to DefaultWebhookTolerance.
	Tolerance time.Duration
	// Now defaults to time.Now().
	Now time.Time
}

// VerifyWebhook checks a delivery against each of secrets (pass both while a rotation
// overlaps) and returns its payload, or a *WebhookVerificationError saying why not.
//
// With the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature), which
// Trackway always sends, the signature covers the message id and timestamp too, and a
// timestamp more than 5 minutes from now is refused, so a captured delivery cannot be replayed
// later. Only without them is X-Service-Signature (body only) used. rawBody must be the exact
// bytes received.
func VerifyWebhook(rawBody []byte, headers http.Header, secrets []string) (*WebhookPayload, error) {
	return VerifyWebhookWithOptions(rawBody, headers, secrets, WebhookOptions{})
}

// header reads a header whatever its key case: http.Header built by hand may hold keys that
// are not canonical.
func header(headers http.Header, name string) (string, bool) {
	if values, ok := headers[http.CanonicalHeaderKey(name)]; ok && len(values) > 0 {
		return values[0], true
	}
	for key, values := range headers {
		if strings.EqualFold(key, name) && len(values) > 0 {
			return values[0], true
		}
	}
	return "", false
}

func anyMatches(keys [][]byte, signatures [][]byte, data []byte) bool {
	for _, key := range keys {
		mac := hmac.New(sha256.New, key)
		mac.Write(data)
		expected := mac.Sum(nil)
		for _, signature := range signatures {
			if hmac.Equal(expected, signature) {
				return true
			}
		}
	}
	return false
}

// VerifyWebhookWithOptions is VerifyWebhook with another tolerance or clock.
func VerifyWebhookWithOptions(rawBody []byte, headers http.Header, secrets []string, options WebhookOptions) (*WebhookPayload, error) {
	var candidates []string
	for _, secret := range secrets {
		if secret != "" {
			candidates = append(candidates, secret)
		}
	}
	if len(candidates) == 0 {
		return nil, errors.New("trackway: VerifyWebhook: no secret given")
	}
	tolerance := options.Tolerance
	if tolerance == 0 {
		tolerance = DefaultWebhookTolerance
	}
	now := options.Now
	if now.IsZero() {
		now = time.Now()
	}

	var verified bool
	if standard, ok := header(headers, "webhook-signature"); ok {
		id, hasID := header(headers, "webhook-id")
		timestamp, hasTimestamp := header(headers, "webhook-timestamp")
		if !hasID || !hasTimestamp || !timestampPattern.MatchString(timestamp) {
			return nil, &WebhookVerificationError{ErrCodeInvalidTimestamp,
				"webhook-id and a numeric webhook-timestamp must accompany webhook-signature"}
		}
		sent, _ := strconv.ParseInt(timestamp, 10, 64)
		if math.Abs(float64(now.Unix()-sent)) > tolerance.Seconds() {
			return nil, &WebhookVerificationError{ErrCodeTimestampOutOfTolerance,
				fmt.Sprintf("webhook-timestamp is more than %d s from now: refused as a possible replay", int(tolerance.Seconds()))}
		}
		var signatures [][]byte
		for _, entry := range strings.Split(standard, " ") {
			if strings.HasPrefix(entry, "v1,") {
				if signature, err := base64.StdEncoding.DecodeString(entry[3:]); err == nil {
					signatures = append(signatures, signature)
				}
			}
		}
		// The Standard Webhooks key is the base64 after `whsec_`.
		var keys [][]byte
		for _, secret := range candidates {
			if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_")); err == nil && len(key) > 0 {
				keys = append(keys, key)
			}
		}
		signed := append([]byte(id+"."+timestamp+"."), rawBody...)
		verified = anyMatches(keys, signatures, signed)
	} else if service, ok := header(headers, "x-service-signature"); ok {
		// X-Service-Signature is keyed with the whole secret string, `whsec_` included.
		if strings.HasPrefix(service, "sha256=") {
			if signature, err := hex.DecodeString(service[7:]); err == nil && len(signature) > 0 {
				keys := make([][]byte, len(candidates))
				for i, secret := range candidates {
					keys[i] = []byte(secret)
				}
				verified = anyMatches(keys, [][]byte{signature}, rawBody)
			}
		}
	} else {
		return nil, &WebhookVerificationError{ErrCodeMissingSignature, "No webhook-signature or X-Service-Signature header"}
	}
	if !verified {
		return nil, &WebhookVerificationError{ErrCodeInvalidSignature, "The signature matches none of the given secrets"}
	}
	var payload WebhookPayload
	if err := json.Unmarshal(rawBody, &payload); err != nil {
		return nil, &WebhookVerificationError{ErrCodeInvalidPayload, "The signed body is not a JSON object"}
	}
	return &payload, nil
}
