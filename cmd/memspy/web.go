package main

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/web"
	"github.com/memspy/memspy/web/server"
)

// reportHTML writes the web UI of the profile args[0] to f.html: memspy
// report --html.
func reportHTML(cmd *cobra.Command, args []string, f reportFlags) error {
	if len(args) > 1 {
		return fmt.Errorf("--html: the page has every view: give no view (%s)", args[1])
	}
	for _, name := range []string{"function", "object", "evictors", "inclusive", "top", "format", "pid"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s does not apply to --html (the page has its own controls)", name)
		}
	}
	if err := atomicfile.Check(f.html); err != nil {
		return err
	}
	pg, err := loadPage(args, f.focus)
	if err != nil {
		return err
	}
	return pg.WriteFile(f.html)
}

// loadPage reads the profiles files (one, or two to compare) and makes
// their page, showing cache focus first ("": each profile's focus).
func loadPage(files []string, focus string) (*web.Page, error) {
	var ps []*profile.Profile
	var ms []*web.Model
	for _, file := range files {
		p, err := profile.ReadFile(file)
		if err != nil {
			return nil, err
		}
		m, err := web.NewModel(p, file, web.DefaultLimits)
		if err != nil {
			return nil, err
		}
		if focus != "" {
			if err := m.SetFocus(focus); err != nil {
				return nil, fmt.Errorf("--focus: %s: %w", file, err)
			}
		}
		ps, ms = append(ps, p), append(ms, m)
	}
	var d *web.Diff
	if len(ps) == 2 {
		var err error
		if d, err = web.NewDiff(ps[0], ps[1], files[0], files[1]); err != nil {
			return nil, err
		}
	}
	return web.NewPage(d, ms...), nil
}

func newServeCmd() *cobra.Command {
	var addr, focus string
	cmd := &cobra.Command{
		Use:   "serve PROFILE [PROFILE2]",
		Short: "Serve the web UI of a saved profile, or of two and their comparison, on 127.0.0.1",
		Long: `Serve the web UI of a saved profile (run or sim with --where and --profile)
on the loopback, at a port the system picks unless --addr says: the URL is
printed. The page is the one memspy report --html writes: the overview
(cycles by procedure, the caches, a treemap of the data structures, who
evicts whom), a procedure's data structures, a pair's detail by cache,
its references with their source lines, under focus controls (cache,
process, processor, threshold). With two profiles, each has its pages and
a third compares them side by side (as memspy diff does). The server is
read-only: it serves the page and the profile files given, nothing else.
It runs until interrupted (Ctrl-C). docs/web.md has the details.`,
		Example: `  memspy run --where --profile mm.memspy -- ./matmul 256
  memspy serve mm.memspy
  memspy serve before.memspy after.memspy --addr 127.0.0.1:8080`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pg, err := loadPage(args, focus)
			if err != nil {
				return err
			}
			for i := range args {
				pg.Profiles[i].Download = server.ProfilePath(i)
			}
			var page bytes.Buffer
			if err := pg.Write(&page); err != nil {
				return err
			}
			ln, err := server.Listen(addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "memspy: serving %s at http://%s/ (Ctrl-C to stop)\n", strings.Join(args, " and "), ln.Addr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return server.Serve(ctx, ln, server.Handler(page.Bytes(), args))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&addr, "addr", server.DefaultAddr, "listen on `HOST:PORT`, a loopback address (port 0: any free port)")
	fl.StringVar(&focus, "focus", "", "the cache the pages show first (default: the profile's focus)")
	return cmd
}
