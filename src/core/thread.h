/*
 * thread.h — threads that leave the process's signals to its main thread.
 *
 * nagare collect takes SIGTERM and SIGINT (stop) and SIGHUP (reload the
 * enrichment tables) in its receive thread (collector/signals.c): the
 * handlers only set flags, which that thread's loop reads.  POSIX delivers
 * a process-directed signal to any thread that does not block it, so every
 * other thread (flush, maintenance, enrichment reloader, the HTTP server's
 * pool) is created with those three blocked: a signal then always reaches
 * the receive thread, and never interrupts a thread's system call with
 * EINTR where no one checks the flag.  A new thread inherits the creating
 * thread's mask (pthread_sigmask(3)), so the mask is set around the
 * creation and put back after it.
 */
#ifndef NG_THREAD_H
#define NG_THREAD_H

#include <pthread.h>
#include <signal.h>

/* Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and saves its
 * mask in *old: threads it creates before ng_signals_restore(old) start
 * with them blocked (for libraries that create their own threads). */
void ng_signals_block(sigset_t *old);

/* Puts back the mask ng_signals_block saved. */
void ng_signals_restore(const sigset_t *old);

/* pthread_create(t, NULL, fn, arg) with the new thread's SIGTERM, SIGINT and
 * SIGHUP blocked.  Returns pthread_create's result (0, or an errno value). */
int ng_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
