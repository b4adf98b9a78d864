/*
 * spmv.c: power iteration with a sparse matrix in CSR form (a 2-D Laplacian
 * with a few random long-range entries per row): each iteration is one call
 * of timestep(), a sparse matrix-vector product and a normalization, for
 * timestep sampling by function (memspy run --sample
 * timesteps=2.5%,timestep-fn=timestep) and for time sampling.
 *
 *   gcc -O2 -g -o spmv examples/sampling/spmv.c -lm
 *   memspy run --sample timesteps=2.5%,timestep-fn=timestep -- ./spmv [N [STEPS]]
 *
 * The grid is N×N (N² rows); building the matrix (initialization) and the
 * final report lie outside every timestep.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	int rows;
	int *start;   /* rows+1 offsets into col and val */
	int *col;
	double *val;
} CSR;

static unsigned long long rng = 88172645463325252ULL;

static unsigned next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 32);
}

#define EXTRA 2   /* random long-range entries per row */

static CSR build(int n)
{
	CSR m;
	m.rows = n * n;
	m.start = malloc(sizeof(int) * (m.rows + 1));
	m.col = malloc(sizeof(int) * m.rows * (5 + EXTRA));
	m.val = malloc(sizeof(double) * m.rows * (5 + EXTRA));
	if (!m.start || !m.col || !m.val) {
		perror("malloc");
		exit(1);
	}
	int k = 0;
	for (int r = 0; r < m.rows; r++) {
		int i = r / n, j = r % n;
		m.start[r] = k;
		int nb[4] = {i > 0 ? r - n : -1, j > 0 ? r - 1 : -1, j < n - 1 ? r + 1 : -1, i < n - 1 ? r + n : -1};
		for (int q = 0; q < 4; q++)
			if (nb[q] >= 0) {
				m.col[k] = nb[q];
				m.val[k++] = -1.0;
			}
		m.col[k] = r;
		m.val[k++] = 4.0 + EXTRA;
		for (int q = 0; q < EXTRA; q++) {
			m.col[k] = next_rand() % m.rows;
			m.val[k++] = -0.5;
		}
	}
	m.start[m.rows] = k;
	return m;
}

/* One iteration: y = A x, then x = y / |y|. Returns |y|. */
__attribute__((noipa)) double timestep(const CSR *m, double *x, double *y)
{
	for (int r = 0; r < m->rows; r++) {
		double s = 0;
		for (int k = m->start[r]; k < m->start[r + 1]; k++)
			s += m->val[k] * x[m->col[k]];
		y[r] = s;
	}
	double norm = 0;
	for (int r = 0; r < m->rows; r++)
		norm += y[r] * y[r];
	norm = sqrt(norm);
	for (int r = 0; r < m->rows; r++)
		x[r] = y[r] / norm;
	return norm;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	int steps = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 2 || steps < 0) {
		fprintf(stderr, "usage: spmv [N [STEPS]]\n");
		return 2;
	}
	CSR m = build(n);
	double *x = malloc(sizeof(double) * m.rows);
	double *y = malloc(sizeof(double) * m.rows);
	if (!x || !y) {
		perror("malloc");
		return 1;
	}
	for (int r = 0; r < m.rows; r++)
		x[r] = 1.0 + (r % 3);
	double lambda = 0;
	for (int t = 0; t < steps; t++)
		lambda = timestep(&m, x, y);
	printf("%d %d %.6f\n", n, steps, lambda);
	free(x);
	free(y);
	free(m.start);
	free(m.col);
	free(m.val);
	return 0;
}
