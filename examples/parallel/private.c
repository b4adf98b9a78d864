/* private: 4 threads each allocate a small record of their own, register
   it (under a lock, after all threads have started) and update it; nothing
   is shared by design, but an allocator with one arena puts the records
   side by side, so they share cache lines: "a structure meant to be
   private that is shared". glibc's per-thread arenas would separate them:
   the program asks for one arena (M_ARENA_MAX, as memory-tight programs
   do; a pool allocator behaves the same), and each thread makes its
   allocator's per-thread cache before the others start allocating their
   records. With "align" each record gets a 64-byte aligned block of its
   own.
   usage: private [align] [iterations] */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4

struct tally {
	long sum, n, min, max;
};

static int align;
static long iterations = 200000;
static pthread_barrier_t started, registered;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tally *registry[THREADS];

static void *work(void *arg)
{
	long me = (long)arg;
	void *volatile warm = malloc(1); /* glibc makes this thread's cache (tcache) now */
	free(warm);
	pthread_barrier_wait(&started);
	pthread_mutex_lock(&lock);
	struct tally *t = align ? aligned_alloc(64, 64) : malloc(sizeof *t);
	if (t != NULL)
		memset(t, 0, sizeof *t);
	registry[me] = t;
	pthread_mutex_unlock(&lock);
	pthread_barrier_wait(&registered);
	if (t == NULL)
		return NULL;
	volatile struct tally *v = t;
	v->min = v->max = me;
	for (long i = 0; i < iterations; i++) {
		long x = i ^ me;
		v->sum += x;
		v->n++;
		if (x > v->max)
			v->max = x;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int a = 1;
	mallopt(M_ARENA_MAX, 1);
	if (a < argc && strcmp(argv[a], "align") == 0) {
		align = 1;
		a++;
	}
	if (a < argc)
		iterations = atol(argv[a]);
	pthread_barrier_init(&started, NULL, THREADS);
	pthread_barrier_init(&registered, NULL, THREADS);
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	long total = 0;
	for (long i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (registry[i] == NULL)
			return 1;
		total += registry[i]->sum + registry[i]->n + registry[i]->max;
		free(registry[i]);
	}
	printf("%ld\n", total);
	return 0;
}
