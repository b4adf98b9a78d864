package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/trace"
)

func newConvertCmd() *cobra.Command {
	var (
		out, format, to, codec string
		skipBad                bool
	)
	cmd := &cobra.Command{
		Use:   "convert TRACE -o OUTPUT",
		Short: "Convert a trace to memspy's .mst binary format (or to din/xdin text)",
		Long: `Convert a trace of any readable format to .mst (see docs/mst.md), or to Dinero
din or extended din text. The output format comes from --to, else from the
output's extension (.din, .xdin; anything else is .mst). The output is written
atomically; if the input ends with an error, the events read before it are
still written and the command fails.`,
		Example: `  memspy convert trace.din -o trace.mst
  memspy convert big.din.bz2 -o big.mst --codec zstd`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("give the output file with -o")
			}
			if to == "" {
				to = "mst"
				if ext := strings.TrimPrefix(filepath.Ext(out), "."); ext == "din" || ext == "xdin" {
					to = ext
				}
			}
			return runConvert(args[0], out, format, to, codec, skipBad)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "output `FILE`")
	fl.StringVar(&format, "format", "", "input trace `FORMAT` (default: detect)")
	fl.StringVar(&to, "to", "", "output format: mst, din or xdin (default: from the extension)")
	fl.StringVar(&codec, "codec", "s2", "mst chunk compression: s2 (fast), zstd (small) or none")
	fl.BoolVar(&skipBad, "skip-bad", false, "count and skip malformed lines instead of stopping")
	return cmd
}

func runConvert(inPath, outPath, format, to, codecName string, skipBad bool) (err error) {
	in, err := openInput(inPath)
	if err != nil {
		return err
	}
	defer in.Close()
	r, err := trace.OpenReader(in, in.name, format, trace.Options{Name: in.name, SkipBad: skipBad})
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(outPath)
	if err != nil {
		return err
	}
	defer f.Abort() // nothing once committed
	var w trace.Writer
	switch to {
	case "mst":
		codec, err := trace.ParseMSTCodec(codecName)
		if err != nil {
			return err
		}
		w, err = trace.NewMSTWriter(f, trace.MSTWriterOptions{Codec: codec, Meta: trace.MSTMeta{
			Creator: "memspy " + version, Created: time.Now().UTC(), Source: in.name, SourceFormat: r.Format(),
		}})
		if err != nil {
			return err
		}
	default:
		if w, err = trace.NewTextWriter(f, to); err != nil {
			return err
		}
	}
	bar := newProgress(in, "converting")
	b := trace.NewBatch(trace.BatchSize)
	var n uint64
	var readErr error
	for {
		rerr := r.Read(b)
		if err := w.Write(b); err != nil {
			return fmt.Errorf("writing %s: %w", outPath, err)
		}
		n += uint64(b.Len())
		bar.update(n)
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				readErr = rerr
			}
			break
		}
	}
	bar.done()
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", outPath, err)
	}
	if n == 0 && readErr == nil {
		return fmt.Errorf("no references in %s (%s not written)", in.name, outPath)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if s, ok := r.(trace.Skipper); ok && s.Skipped() > 0 {
		fmt.Fprintf(os.Stderr, "memspy: skipped %d malformed lines of %s\n", s.Skipped(), in.name)
	}
	if readErr != nil {
		return fmt.Errorf("reading %s after %d events: %w (%s holds those events)", in.name, n, readErr, outPath)
	}
	return nil
}
