/* sync: 4 threads synchronize in every way memspy traces. Each locks a
   mutex N times around an update of a shared counter, waits ROUNDS times
   at a barrier of 4, adds 1 to a shared counter M times atomically, then
   tells the main thread it is done (a condition variable) and waits for
   its go (another). The main thread creates the threads, waits until all
   are done, lets them go and joins them.
   usage: sync [N [ROUNDS [M]]]   (defaults 100 3 50)
   It prints the two counters: 4*N and 4*M. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

static long n = 100, rounds = 3, m = 50;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;          /* under lock */
static long atomic_counter;   /* atomic adds */
static pthread_barrier_t barrier;

static pthread_mutex_t hand = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER;
static int done, go;          /* under hand */

static void *work(void *arg)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	for (long r = 0; r < rounds; r++)
		pthread_barrier_wait(&barrier);
	for (long i = 0; i < m; i++)
		__atomic_fetch_add(&atomic_counter, 1, __ATOMIC_SEQ_CST);

	pthread_mutex_lock(&hand);
	done++;
	pthread_cond_signal(&done_cv);
	while (!go)
		pthread_cond_wait(&go_cv, &hand);
	pthread_mutex_unlock(&hand);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = atol(argv[1]);
	if (argc > 2)
		rounds = atol(argv[2]);
	if (argc > 3)
		m = atol(argv[3]);
	pthread_barrier_init(&barrier, NULL, THREADS);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}

	pthread_mutex_lock(&hand);
	while (done < THREADS)
		pthread_cond_wait(&done_cv, &hand);
	go = 1;
	pthread_cond_broadcast(&go_cv);
	pthread_mutex_unlock(&hand);

	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", counter, atomic_counter);
	return 0;
}
