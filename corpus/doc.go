// Package corpus proves that memspy runs real programs exactly as they run
// natively (issue 25). It has no code outside its tests: TestCorpus runs a
// corpus of programs nobody in this project wrote (coreutils, sh, bash,
// python3, perl, gzip, xz, git, sqlite3) and a few that it builds from
// examples/corpus (C++ containers, a Go program, pthreads, fork+exec,
// printf of doubles), each natively, under cachegrind and under bin/memspy
// run in several modes: plain, --where, --where --miss-only and, for
// threaded programs, --procs 4. Each run under memspy must exit with the
// native status, write the native standard output byte for byte and end
// with memspy's summary on standard error; and its instruction fetches and
// data references (reads, writes and modifies, a modify counted once) must
// equal cachegrind's I refs and D refs within 0.1% (2% on threaded
// programs, whose counts vary with scheduling), or within the measured
// difference the test lists for programs where memspy is known to differ
// more today. When memspy follows the program's children, the counts are
// those of every process.
//
// Cachegrind's program runs in the environment it gets under memspy, the
// same variables in the same order, with a stand-in for memspy's preload
// (the preload without its symbols): it then does the same work as under
// memspy. TestPreloadCost bounds what the preload itself adds to a run.
//
// make test runs the corpus with small inputs. make corpus sets
// MEMSPY_CORPUS=big: the same programs with inputs that take about a
// second natively, one at a time, and a table of the outcomes, the count
// differences, the wall time against cachegrind and valgrind --tool=none,
// and peak memory.
package corpus
