/* counters: 4 threads increment their own counter; adjacent counters share
   a cache line (false sharing) unless built with -DPADDED.
   usage: counters [iterations] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

struct counter {
	volatile long value;
#ifdef PADDED
	char pad[56];
#endif
};

static struct counter counters[THREADS];
static long iterations;

static void *work(void *arg)
{
	struct counter *c = arg;
	for (long i = 0; i < iterations; i++)
		c->value++;
	return NULL;
}

int main(int argc, char **argv)
{
	iterations = argc > 1 ? atol(argv[1]) : 100000;
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, &counters[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	long sum = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		sum += counters[i].value;
	}
	printf("%ld\n", sum);
	return 0;
}
