/* threads: the corpus's pthreads program. Four threads each sum a strided
   series into their own slot of a shared array (no locks, no atomics: each
   writes only its slot), and the main thread joins them and prints every
   slot and the total, so the output is the same whatever the scheduling.
   Exercises thread creation and join, per-thread stacks and writes to
   neighbouring words of one line from several threads.
   usage: threads [n]   (each thread sums n terms; default 100000) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4

static long n;
static unsigned long slot[NTHREADS];

static void *work(void *arg)
{
	long k = (long)arg;
	for (long i = 0; i < n; i++)
		slot[k] += (unsigned long)(i * NTHREADS + k) * (unsigned long)(i % 7 + 1);
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 100000;
	if (n < 0) {
		fprintf(stderr, "usage: threads [n]\n");
		return 2;
	}
	pthread_t t[NTHREADS];
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&t[k], NULL, work, (void *)k) != 0) {
			perror("pthread_create");
			return 1;
		}
	unsigned long total = 0;
	for (int k = 0; k < NTHREADS; k++) {
		pthread_join(t[k], NULL);
		total += slot[k];
	}
	for (int k = 0; k < NTHREADS; k++)
		printf("slot %d: %lu\n", k, slot[k]);
	printf("total: %lu\n", total);
	return 0;
}
