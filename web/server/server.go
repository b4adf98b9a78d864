// Package server serves the web UI of memspy serve: one page and the
// profile files it was made from, read-only, on a loopback address. It
// serves nothing else: no path of a request names a file.
package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// DefaultAddr is the address memspy serve listens on unless told: the
// IPv4 loopback, a port the system picks.
const DefaultAddr = "127.0.0.1:0"

// csp lets the page run its own inline script and style and load nothing.
const csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:"

// Listen listens on addr, which must be a loopback address (127.0.0.1,
// ::1 or localhost, with a port; port 0 picks one).
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %s: %w (want HOST:PORT, such as 127.0.0.1:8080)", addr, err)
	}
	if !loopback(host) {
		return nil, fmt.Errorf("--addr %s: memspy serve listens on the loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return net.Listen("tcp", addr)
}

// loopback reports whether host names the loopback.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ProfilePath is the path at which Handler serves the i-th profile file
// (from 0).
func ProfilePath(i int) string { return "/profile/" + strconv.Itoa(i+1) }

// Handler serves page at / and the files profiles at ProfilePath(i), to
// GET and HEAD requests addressed to a loopback host name (a page of
// another site that resolves its name to 127.0.0.1 gets nothing);
// anything else is an error.
func Handler(page []byte, profiles []string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(page))
	})
	for i, file := range profiles {
		mux.HandleFunc(ProfilePath(i), func(w http.ResponseWriter, r *http.Request) {
			f, err := os.Open(file)
			if err != nil {
				http.Error(w, "the profile cannot be read", http.StatusInternalServerError)
				return
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil || !fi.Mode().IsRegular() {
				http.Error(w, "the profile cannot be read", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filepath.Base(file)}))
			http.ServeContent(w, r, "", fi.ModTime(), f)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		switch {
		case !loopback(host):
			http.Error(w, "memspy serve answers requests to the loopback only", http.StatusForbidden)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// Serve serves h on ln until ctx is done, then shuts down, letting the
// requests under way finish for up to a few seconds.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
