/* falseshare: 4 threads each increment their own counter, the counters
   side by side in one heap block: they share cache lines (false sharing).
   With "pad" each counter gets a 64-byte slot of its own.
   usage: falseshare [pad] [iterations] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4

static volatile long *counts;
static long stride = 1; /* in longs: 1 side by side, 8 padded */
static long iterations = 200000;

static void *work(void *arg)
{
	volatile long *mine = &counts[(long)arg * stride];
	for (long i = 0; i < iterations; i++)
		(*mine)++;
	return NULL;
}

int main(int argc, char **argv)
{
	int a = 1;
	if (a < argc && strcmp(argv[a], "pad") == 0) {
		stride = 8;
		a++;
	}
	if (a < argc)
		iterations = atol(argv[a]);
	counts = calloc(THREADS * stride, sizeof(long));
	if (counts == NULL)
		return 1;
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	long sum = 0;
	for (long i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		sum += counts[i * stride];
	}
	printf("%ld\n", sum);
	free((void *)counts);
	return 0;
}
