/* thread.c — threads that leave the process's signals to its main thread
 * (thread.h). */
#include "core/thread.h"

void ng_signals_block(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, old);
}

void ng_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int ng_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t old;
	ng_signals_block(&old);
	int rc = pthread_create(t, NULL, fn, arg);
	ng_signals_restore(&old);
	return rc;
}
