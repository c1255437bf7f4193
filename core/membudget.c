/* membudget.c - the process's memory budget (membudget.h). */
#include <stdatomic.h>
#include <stdint.h>

#include "membudget.h"

static atomic_size_t limit_bytes;
static atomic_size_t held_bytes;

void membudget_set_limit(size_t limit)
{
	atomic_store(&limit_bytes, limit);
}

size_t membudget_limit(void)
{
	return atomic_load(&limit_bytes);
}

int membudget_fits(size_t bytes)
{
	size_t limit = atomic_load(&limit_bytes), held = atomic_load(&held_bytes);

	return !limit || (bytes <= limit && held <= limit - bytes);
}

int membudget_take_replacing(size_t bytes, size_t replaced)
{
	size_t limit = atomic_load(&limit_bytes);
	size_t held = atomic_load(&held_bytes);
	size_t room;

	if (!limit) {
		atomic_fetch_add(&held_bytes, bytes);
		return 0;
	}
	room = replaced > SIZE_MAX - limit ? SIZE_MAX : limit + replaced;
	do {
		if (bytes > room || held > room - bytes)
			return -1;
	} while (!atomic_compare_exchange_weak(&held_bytes, &held, held + bytes));
	return 0;
}

int membudget_take(size_t bytes)
{
	return membudget_take_replacing(bytes, 0);
}

void membudget_give(size_t bytes)
{
	atomic_fetch_sub(&held_bytes, bytes);
}

size_t membudget_held(void)
{
	return atomic_load(&held_bytes);
}
