/* pmatmul: C = A x B for n x n doubles, blocked, on 4 threads; each thread
   owns a band of rows of A and C, which it initializes itself (so that
   first-touch placement homes them at its node), and packs each block of B
   into a buffer of its own before using it. B is shared, initialized by
   the main thread. The threads meet at a barrier between initialization
   and the multiply, and again before freeing their buffers: each buffer
   fills whole pages of its own and none is freed (and reused by another
   thread) while a thread still packs, so every page of a buffer is first
   touched by its owner whatever the scheduling.
   usage: pmatmul [n] [block] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

static long n = 128, bs = 32;
static double *A, *B, *C;
static pthread_barrier_t ready, done;

static void *work(void *arg)
{
	long t = (long)arg, lo = n * t / THREADS, hi = n * (t + 1) / THREADS;
	for (long i = lo; i < hi; i++)
		for (long j = 0; j < n; j++) {
			A[i * n + j] = (double)(i + j) / n;
			C[i * n + j] = 0;
		}
	size_t pagebytes = (bs * bs * sizeof(double) + 4095) / 4096 * 4096;
	double *pack = aligned_alloc(4096, pagebytes); /* private: one block of B */
	if (pack == NULL)
		exit(1); /* the other threads would wait at the barrier for ever */
	pthread_barrier_wait(&ready);
	for (long kk = 0; kk < n; kk += bs)
		for (long jj = 0; jj < n; jj += bs) {
			for (long k = 0; k < bs; k++)
				for (long j = 0; j < bs; j++)
					pack[k * bs + j] = B[(kk + k) * n + jj + j];
			for (long i = lo; i < hi; i++)
				for (long k = 0; k < bs; k++) {
					double a = A[i * n + kk + k];
					for (long j = 0; j < bs; j++)
						C[i * n + jj + j] += a * pack[k * bs + j];
				}
		}
	pthread_barrier_wait(&done);
	free(pack);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = atol(argv[1]);
	if (argc > 2)
		bs = atol(argv[2]);
	if (n <= 0 || bs <= 0 || n % bs != 0 || n % THREADS != 0) {
		fprintf(stderr, "pmatmul: n must be a multiple of the block size and of %d\n", THREADS);
		return 2;
	}
	size_t bytes = (size_t)n * n * sizeof(double);
	A = aligned_alloc(4096, bytes);
	B = aligned_alloc(4096, bytes);
	C = aligned_alloc(4096, bytes);
	if (A == NULL || B == NULL || C == NULL)
		return 1;
	for (long i = 0; i < n * n; i++)
		B[i] = (double)(i % 7);
	pthread_barrier_init(&ready, NULL, THREADS);
	pthread_barrier_init(&done, NULL, THREADS);
	pthread_t th[THREADS];
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, work, (void *)t) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (long t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	double sum = 0;
	for (long i = 0; i < n * n; i++)
		sum += C[i];
	printf("%.0f\n", sum);
	return 0;
}
