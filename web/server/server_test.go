package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHandler checks that the handler serves the page and the profiles
// given, and nothing else: no other path, no other method, no host name
// but the loopback's.
func TestHandler(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "a.memspy")
	if err := os.WriteFile(prof, []byte("profile A"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := Handler([]byte("<!DOCTYPE html>page"), []string{prof})
	for _, c := range []struct {
		method, target, host string
		code                 int
		body                 string
	}{
		{"GET", "/", "127.0.0.1:8080", 200, "<!DOCTYPE html>page"},
		{"HEAD", "/", "localhost:8080", 200, ""},
		{"GET", "/", "[::1]:8080", 200, "<!DOCTYPE html>page"},
		{"GET", ProfilePath(0), "127.0.0.1:8080", 200, "profile A"},
		{"GET", ProfilePath(1), "127.0.0.1:8080", 404, ""},
		{"GET", "/profile/", "127.0.0.1:8080", 404, ""},
		{"GET", "/index.html", "127.0.0.1:8080", 404, ""},
		{"GET", "/secret", "127.0.0.1:8080", 404, ""},
		{"GET", "/" + prof[1:], "127.0.0.1:8080", 404, ""},
		{"GET", "/" + prof, "127.0.0.1:8080", 307, ""},                // (to the path cleaned: 404)
		{"GET", "/profile/1/../../secret", "127.0.0.1:8080", 307, ""}, // (to /secret: 404)
		{"GET", "/?file=" + secret, "127.0.0.1:8080", 200, "<!DOCTYPE html>page"},
		{"POST", "/", "127.0.0.1:8080", 405, ""},
		{"PUT", ProfilePath(0), "127.0.0.1:8080", 405, ""},
		{"DELETE", ProfilePath(0), "127.0.0.1:8080", 405, ""},
		{"OPTIONS", "/", "127.0.0.1:8080", 405, ""},
		{"GET", "/", "attacker.example:8080", 403, ""},
		{"GET", "/", "192.168.1.5:8080", 403, ""},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		res := w.Result()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != c.code {
			t.Errorf("%s %s (host %s): %d, want %d", c.method, c.target, c.host, res.StatusCode, c.code)
		}
		if c.body != "" && string(body) != c.body {
			t.Errorf("%s %s: body %q, want %q", c.method, c.target, body, c.body)
		}
		if strings.Contains(string(body), "TOP-SECRET") {
			t.Errorf("%s %s: served the secret", c.method, c.target)
		}
		if got := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'none'") {
			t.Errorf("%s %s: policy %q", c.method, c.target, got)
		}
		if c.code == 405 && res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", c.method, c.target, res.Header.Get("Allow"))
		}
		if c.target == ProfilePath(0) && c.code == 200 && !strings.Contains(res.Header.Get("Content-Disposition"), `filename=a.memspy`) {
			t.Errorf("profile: Content-Disposition %q", res.Header.Get("Content-Disposition"))
		}
	}
	// A profile that went away is an error, not another file.
	if err := os.Remove(prof); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", ProfilePath(0), nil)
	r.Host = "127.0.0.1:8080"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 500 {
		t.Errorf("a missing profile: %d", w.Code)
	}
}

// TestListen checks that only loopback addresses are listened on.
func TestListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "example.com:80", "8080", "127.0.0.1"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) did not fail", addr)
		}
	}
	ln, err := Listen(DefaultAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() || ip.To4() == nil {
		t.Errorf("listening on %v", ln.Addr())
	}
}

// TestServe checks that Serve answers on its listener until its context
// ends, then returns.
func TestServe(t *testing.T) {
	ln, err := Listen(DefaultAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, Handler([]byte("page"), nil)) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "page" {
		t.Errorf("served %q", body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Error("still serving")
	}
}
