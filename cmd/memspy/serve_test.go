package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServe runs memspy serve on two profiles: it prints its URL on the
// loopback, serves the page of both and their comparison, and each
// profile, read-only, and stops when its context ends.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join("..", "..", "..", "shared", "traces", "mm32.din.gz")
	a, b := filepath.Join(dir, "small.memspy"), filepath.Join(dir, "big.memspy")
	for _, args := range [][]string{
		{"sim", trace, "--where", "--profile", a, "--cache", "L1D:size=1k,assoc=2,line=32,holds=d"},
		{"sim", trace, "--where", "--profile", b, "--cache", "L1D:size=8k,assoc=4,line=32,holds=d"},
	} {
		root := newRoot()
		root.SetArgs(args)
		root.SetOut(io.Discard)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"serve", a, b})
		root.SetOut(w)
		done <- root.ExecuteContext(ctx)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`^memspy: serving .*small.memspy and .*big.memspy at (http://127\.0\.0\.1:[0-9]+/) \(Ctrl-C to stop\)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	get := func(method, path string) (int, string) {
		req, err := http.NewRequest(method, m[1]+strings.TrimPrefix(path, "/"), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	code, page := get("GET", "/")
	if code != 200 || !strings.Contains(page, `"download":"/profile/1"`) || !strings.Contains(page, `"diff":{"a":"`) {
		t.Errorf("GET /: %d, %.200q", code, page)
	}
	want, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get("GET", "/profile/2"); code != 200 || body != string(want) {
		t.Errorf("GET /profile/2: %d, %d bytes (want %d)", code, len(body), len(want))
	}
	for _, c := range []struct{ method, path string }{{"POST", "/"}, {"GET", "/profile/3"}, {"GET", "/small.memspy"}} {
		if code, _ := get(c.method, c.path); code < 400 {
			t.Errorf("%s %s: %d", c.method, c.path, code)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
