/*
 * jacobi.c: a 2-D Jacobi relaxation (5-point stencil) of an n×n grid for a
 * number of timesteps, each marked with MEMSPY_SAMPLE_BEGIN/END: a program
 * for time sampling and for SIGMA-style timestep sampling.
 *
 *   gcc -O2 -g -I tracer/valgrind/tool -o jacobi examples/sampling/jacobi.c
 *   memspy run --sample timesteps=2.5% -- ./jacobi [N [STEPS]]
 *
 * Each timestep relaxes every row with a call of relax_row (so that the
 * calls and returns go on in a sampling gap) and swaps the grids; the
 * initialization and the final checksum lie outside every timestep.
 * Natively, the markers do nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include "memspy.h"

__attribute__((noipa)) static void relax_row(const double *up, const double *row, const double *down,
                                             double *out, int n)
{
	for (int j = 1; j < n - 1; j++)
		out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 512;
	int steps = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 3 || steps < 0) {
		fprintf(stderr, "usage: jacobi [N [STEPS]]\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * n * n);
	double *b = malloc(sizeof(double) * n * n);
	if (!a || !b) {
		perror("malloc");
		return 1;
	}
	for (int i = 0; i < n * n; i++)
		a[i] = b[i] = (i % n == 0 || i / n == 0) ? 1.0 : 0.0;
	for (int t = 0; t < steps; t++) {
		MEMSPY_SAMPLE_BEGIN();
		for (int i = 1; i < n - 1; i++)
			relax_row(a + (i - 1) * n, a + i * n, a + (i + 1) * n, b + i * n, n);
		double *s = a;
		a = b;
		b = s;
		MEMSPY_SAMPLE_END();
	}
	double sum = 0;
	for (int i = 0; i < n * n; i++)
		sum += a[i];
	printf("%d %d %.6f\n", n, steps, sum);
	free(a);
	free(b);
	return 0;
}
