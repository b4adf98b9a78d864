/*
 * markers.c: a program that talks to memspy through memspy.h, and has
 * functions to trace partially (memspy run --start-fn kernel, --trace-fn
 * kernel, --start-stopped) and a recursion for the call stack (fib).
 *
 *   gcc -O1 -g -I tracer/valgrind/tool -o markers examples/c/markers.c
 *   memspy run -- ./markers [STEPS]
 *
 * The global array g is read N times by each call of kernel(N) and of
 * other(N), one load per element (-O1 does not vectorise): the tests count
 * these loads exactly. Natively, the markers do nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include "memspy.h"

#define N 1000
double g[N];

__attribute__((noipa)) double kernel(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += g[i];
	return s;
}

__attribute__((noipa)) double other(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += 2 * g[i];
	return s;
}

__attribute__((noipa)) long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	double s = 0;
	for (int i = 0; i < N; i++)
		g[i] = i;
	MEMSPY_NAME_RANGE(g, sizeof g, "g");
	s += other(N); /* before the first kernel */
	for (int t = 0; t < steps; t++) {
		MEMSPY_SAMPLE_BEGIN();
		MEMSPY_REGION_BEGIN("step");
		s += kernel(N);
		s += other(N);
		MEMSPY_REGION_END("step");
		MEMSPY_SAMPLE_END();
	}
	MEMSPY_DUMP_STATS("steps");
	MEMSPY_RESET_STATS();
	MEMSPY_STOP_TRACING();
	s += other(N); /* never traced */
	MEMSPY_START_TRACING();
	s += kernel(10);
	printf("%g %ld\n", s, fib(10));
	return 0;
}
