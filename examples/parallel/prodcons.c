/* prodcons: a producer fills a shared buffer, a consumer sums it, round
   after round, the two meeting at a barrier: every line of the buffer
   moves between them (true sharing).
   usage: prodcons [rounds] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 1024

static double *buf;
static long rounds = 200;
static double total;
static pthread_barrier_t turn;

static void *produce(void *arg)
{
	(void)arg;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < ITEMS; i++)
			buf[i] = r + i;
		pthread_barrier_wait(&turn); /* filled */
		pthread_barrier_wait(&turn); /* consumed */
	}
	return NULL;
}

static void *consume(void *arg)
{
	(void)arg;
	for (long r = 0; r < rounds; r++) {
		pthread_barrier_wait(&turn);
		double s = 0;
		for (int i = 0; i < ITEMS; i++)
			s += buf[i];
		total += s;
		pthread_barrier_wait(&turn);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	buf = malloc(ITEMS * sizeof(double));
	if (buf == NULL)
		return 1;
	pthread_barrier_init(&turn, NULL, 2);
	pthread_t p, c;
	if (pthread_create(&p, NULL, produce, NULL) != 0 || pthread_create(&c, NULL, consume, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("%g\n", total);
	free(buf);
	return 0;
}
