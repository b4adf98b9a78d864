// Command memspy tells programmers where and why their programs stall on
// memory. This is its thin command-line front end; the work is done by the
// packages trace (readers), machine (descriptions), sim (engine), profile
// (results) and report (renderers).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a process exit status through cobra. A nil err exits
// with code silently (memspy run passing on its program's exit status).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "memspy",
		Short:         "memspy finds where and why programs stall on memory",
		Long:          "memspy simulates memory hierarchies on traces of memory references and reports where\nand why a program misses. See README.md and docs/ for the details.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newSimCmd(), newRunCmd(), newReportCmd(), newServeCmd(), newDiffCmd(), newExportCmd(), newConvertCmd(), newMachinesCmd(), newSampleEvalCmd())
	return root
}

func main() {
	if os.Getenv("GOMEMLIMIT") == "" { // (which overrides it)
		limitMemory()
	}
	err := newRoot().Execute()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "memspy:", err)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "memspy:", err)
	os.Exit(1)
}
