package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// HTTPError is an error answer of a provider.
type HTTPError struct {
	Provider string
	Status   int
	Type     string
	Message  string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Provider, e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// StreamError is an error the provider reported in the middle of a stream,
// or a stream that broke off.
type StreamError struct {
	Provider string
	Type     string
	Message  string
}

func (e *StreamError) Error() string {
	if e.Type != "" {
		return fmt.Sprintf("%s: stream error %s: %s", e.Provider, e.Type, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Provider, e.Message)
}

// errorOf reads the error type and message of an error body: Anthropic's
// {"type":"error","error":{"type","message"}}, OpenAI's and most compatible
// servers' {"error":{"type","message","code"}}, and flat {"message"} shapes.
func errorOf(body []byte) (typ, msg string) {
	e := gjson.GetBytes(body, "error")
	if e.IsObject() {
		typ, msg = e.Get("type").String(), e.Get("message").String()
		if typ == "" {
			typ = e.Get("code").String()
		}
		return typ, msg
	}
	if e.Type == gjson.String {
		return "", e.Str
	}
	if m := gjson.GetBytes(body, "message"); m.Exists() {
		return gjson.GetBytes(body, "type").String(), m.String()
	}
	return "", strings.TrimSpace(string(bytes.ToValidUTF8(body[:min(len(body), 200)], nil)))
}

// post sends the request, retrying connection errors and 408, 409, 429 and
// 5xx answers (or as x-should-retry says) up to retries times, with the
// delay the server asks for (retry-after-ms, retry-after in seconds or as
// an HTTP date) or an exponential backoff. It returns the response of a
// 2xx answer; its body is the caller's to close.
func post(ctx context.Context, client *http.Client, provider, url string, header http.Header, body []byte, retries int) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header = header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil || attempt >= retries {
				return nil, fmt.Errorf("%s: %w", provider, unwrapURL(err))
			}
			if !sleep(ctx, backoff(attempt)) {
				return nil, ctx.Err()
			}
			continue
		}
		if resp.StatusCode < 300 {
			return resp, nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		typ, msg := errorOf(b)
		herr := &HTTPError{Provider: provider, Status: resp.StatusCode, Type: typ, Message: msg}
		if attempt >= retries || !shouldRetry(resp) {
			return nil, herr
		}
		if !sleep(ctx, retryDelay(resp.Header, attempt)) {
			return nil, ctx.Err()
		}
	}
}

func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap()
	}
	return err
}

func shouldRetry(resp *http.Response) bool {
	switch resp.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := resp.StatusCode
	return s == 408 || s == 409 || s == 429 || s >= 500
}

func retryDelay(h http.Header, attempt int) time.Duration {
	if v, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && v >= 0 && v <= 60000 {
		return time.Duration(v * float64(time.Millisecond))
	}
	if ra := h.Get("retry-after"); ra != "" {
		if v, err := strconv.ParseFloat(ra, 64); err == nil && v >= 0 && v <= 60 {
			return time.Duration(v * float64(time.Second))
		}
		if t, err := http.ParseTime(ra); err == nil {
			if d := time.Until(t); d > 0 && d <= time.Minute {
				return d
			}
		}
	}
	return backoff(attempt)
}

// backoff is 0.5 s · 2^attempt, at most 8 s, less up to 25 % jitter.
func backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<attempt, 8*time.Second)
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
