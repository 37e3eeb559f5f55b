package pricing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/panto-dev/panto/internal/exitcode"
)

// LiteLLMURL is where panto-cost --update-prices fetches LiteLLM's price
// table by default.
const LiteLLMURL = "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"

// FetchedPath is where --update-prices keeps the price table it fetched:
// litellm.json beside models.toml ($XDG_CONFIG_HOME/panto, else
// ~/.config/panto). Open lays it over the built-in table, and models.toml
// (or --pricing) over it.
func FetchedPath(getenv func(string) string) string {
	if p := DefaultPath(getenv); p != "" {
		return filepath.Join(filepath.Dir(p), "litellm.json")
	}
	return ""
}

// Updated is what Update did.
type Updated struct {
	Path     string
	From     string // the URL, its password hidden
	Models   int    // models the new table prices
	Replaced string // the day of the table it replaced ("" if none)
	Warnings []string
}

// minModels is the least number of models a fetched table must price to
// replace the one in use: a truncated or emptied answer never does.
const minModels = 10

// Update fetches LiteLLM's price table from rawURL and, once it is read
// whole and priced at least minModels models, puts it at path in place of
// the one there (a new file written beside it, synced, renamed over it:
// a reader sees the old table or the new one, never a part). Nothing is
// replaced on any error. A bad URL is a usage error (exit 2); a network
// error, a status other than 200, or an answer that is not a price table
// is an operational one (exit 3).
func Update(ctx context.Context, client *http.Client, rawURL, path string) (Updated, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Updated{}, exitcode.Usagef("--update-prices %q is no http(s) URL: give the URL of LiteLLM's model_prices_and_context_window.json, or none for %s", rawURL, LiteLLMURL)
	}
	if path == "" {
		return Updated{}, exitcode.Usagef("no place for prices: set XDG_CONFIG_HOME or HOME")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Updated{}, exitcode.Usagef("--update-prices %q: %v", rawURL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Updated{}, exitcode.Failuref("fetch prices: %v: nothing replaced; try again, or give another URL", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Updated{}, exitcode.Failuref("fetch prices: %s answered %s: nothing replaced", u.Redacted(), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFile+1))
	if err != nil {
		return Updated{}, exitcode.Failuref("fetch prices: %v: nothing replaced; try again", err)
	}
	if len(b) > maxFile {
		return Updated{}, exitcode.Failuref("fetch prices: %s sent more than %d MiB: not a price table; nothing replaced", u.Redacted(), maxFile>>20)
	}
	t, warnings, err := LoadLiteLLM(b)
	if err != nil {
		return Updated{}, exitcode.Failuref("fetch prices: %s sent no LiteLLM price table (%v): nothing replaced", u.Redacted(), err)
	}
	n := 0
	for _, p := range t {
		if p.Input.Known && p.Output.Known {
			n++
		}
	}
	if n < minModels {
		return Updated{}, exitcode.Failuref("fetch prices: %s sent a table of %d priced models (at least %d expected): nothing replaced", u.Redacted(), n, minModels)
	}
	up := Updated{Path: path, From: u.Redacted(), Models: n, Warnings: warnings}
	if fi, err := os.Stat(path); err == nil {
		up.Replaced = fi.ModTime().UTC().Format("2006-01-02")
	}
	if err := replaceFile(path, b); err != nil {
		return Updated{}, exitcode.Failuref("write prices: %v: nothing replaced", err)
	}
	return up, nil
}

// replaceFile puts b at path atomically: a temporary file beside it,
// synced, renamed over it, the directory synced.
func replaceFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".litellm-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Client is the HTTP client of --update-prices: a minute at most.
func Client() *http.Client { return &http.Client{Timeout: time.Minute} }
