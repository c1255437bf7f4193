/* collisiond_bench.c - the offline benchmark in the anchor harness's protocol
 * (../shared/bench/README.md, "Adding the project"): same arguments as
 * `anchors bench`, writes OUTDIR/TAG_project.hits (closest hit per ray) and
 * prints one JSON line with "engine":"project". Single thread, medians.
 *
 *   collisiond-bench --obj M.obj --rays R.rays [--outdir DIR] [--tag NAME]
 *                    [--reps 5] [--split K] [--warmup 100000] [--limit N] [--no-anyhit]
 *                    [--batch N]
 *
 * --batch: rays per batch, as a client sends them to the daemon (default
 * 65536, the daemon's --max-batch; 1: every ray alone, in file order).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "formats.h"
#include "mesh.h"

struct rec_ray {
	float o[3], d[3], tmax;
};

struct rec_hit {
	int32_t tri;
	float t;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static _Noreturn void die(const char *msg, const char *arg)
{
	fprintf(stderr, "collisiond-bench: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
	exit(1);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		die("cannot open", path);
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		die("cannot size", path);
	buf = malloc((size_t)n + 1);
	if (!buf)
		die("out of memory reading", path);
	if (n && fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("read error", path);
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static struct ray to_ray(const struct rec_ray *r)
{
	struct ray q;

	q.origin = v3(r->o[0], r->o[1], r->o[2]);
	q.dir = v3(r->d[0], r->d[1], r->d[2]);
	q.tmax = r->tmax >= 3e38f ? INFINITY : r->tmax;
	return q;
}

/* A batch's rays and answers. */
struct batch_room {
	struct ray *rays;
	struct hit *hits;
	uint32_t *n;
	enum core_result *res;
};

/* Ray q (number i); its closest hit goes to out[i] when out is not NULL. */
static size_t cast_one(const struct mesh *m, const struct ray *q, size_t i,
		       const struct query_opts *opts, struct rec_hit *out)
{
	struct hit h;
	uint32_t n = 0;

	mesh_raycast(m, q, opts, &h, &n, NULL);
	if (out) {
		out[i].tri = n ? (int32_t)h.triangle : -1;
		out[i].t = n ? h.t : INFINITY;
	}
	return n;
}

/*
 * One pass over rays [a, b), cut into batches of `batch` rays as a client
 * of the daemon sends them: batch 1 casts every ray alone (mesh_raycast),
 * a larger one goes through mesh_raycast_batch as the daemon's batches do.
 * Closest hits go to out when not NULL; room holds batch rays, hits and
 * counts.
 */
static size_t pass(const struct mesh *m, const struct rec_ray *rays, size_t a, size_t b,
		   enum hit_mode mode, struct rec_hit *out, size_t batch, struct batch_room *room)
{
	/* bare hits: the harness reads a triangle and a distance, as the
	 * daemon's binary batches answer (the JSON answer's point and normal
	 * cost 4-8 % more a ray: README "Performance") */
	struct query_opts opts = { .mode = mode, .max_hits = 1, .bare_hits = 1 };
	size_t hits = 0;

	for (size_t s = a; s < b; s += batch) {
		size_t e = b - s < batch ? b : s + batch;

		if (batch == 1) {
			struct ray q = to_ray(&rays[s]);

			hits += cast_one(m, &q, s, &opts, out);
			continue;
		}
		for (size_t i = s; i < e; i++)
			room->rays[i - s] = to_ray(&rays[i]);
		mesh_raycast_batch(m, room->rays, e - s, &opts, room->hits, room->n, room->res);
		for (size_t i = s; i < e; i++) {
			uint32_t n = room->n[i - s];

			hits += n;
			if (out) {
				out[i].tri = n ? (int32_t)room->hits[i - s].triangle : -1;
				out[i].t = n ? room->hits[i - s].t : INFINITY;
			}
		}
	}
	return hits;
}

/* Resident set size in bytes (for the harness's rss_delta_bytes). */
static long rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * sysconf(_SC_PAGESIZE);
}

static const char *basename_noext(const char *p, char *buf, size_t len)
{
	const char *s = strrchr(p, '/');
	char *d;

	snprintf(buf, len, "%s", s ? s + 1 : p);
	d = strrchr(buf, '.');
	if (d)
		*d = 0;
	return buf;
}

int main(int argc, char **argv)
{
	const char *obj = NULL, *raysf = NULL, *outdir = "results", *tag = NULL;
	int reps = 5, do_any = 1;
	size_t warmup = 100000, limit = 0, split = 0, batch = 65536, n, len;
	struct batch_room room;
	char tagbuf[256], path[4096];
	struct api_fail fail;
	struct mesh_data md = { 0 };
	struct mesh *m = NULL;
	struct mesh_info info;
	struct rec_ray *rays;
	struct rec_hit *hits;
	char *text;
	double tb[5], tc[64], tca[64], tcb[64], ta[64], taa[64], tab[64];
	int nb;
	long rss0, rss_delta = 0;
	size_t nhits = 0, nhits_a = 0, nany = 0;
	FILE *f;

	for (int a = 1; a < argc; a++) {
		const char *k = argv[a];
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(k, "--no-anyhit")) {
			do_any = 0;
			continue;
		}
		if (!v)
			die("missing value for", k);
		a++;
		if (!strcmp(k, "--obj"))
			obj = v;
		else if (!strcmp(k, "--rays"))
			raysf = v;
		else if (!strcmp(k, "--outdir"))
			outdir = v;
		else if (!strcmp(k, "--tag"))
			tag = v;
		else if (!strcmp(k, "--reps"))
			reps = atoi(v) < 1 ? 1 : atoi(v) > 64 ? 64 : atoi(v);
		else if (!strcmp(k, "--warmup"))
			warmup = strtoul(v, NULL, 10);
		else if (!strcmp(k, "--limit"))
			limit = strtoul(v, NULL, 10);
		else if (!strcmp(k, "--batch"))
			batch = strtoul(v, NULL, 10) ? strtoul(v, NULL, 10) : 1;
		else if (!strcmp(k, "--split"))
			split = strtoul(v, NULL, 10);
		else if (!strcmp(k, "--engines"))
			;	/* accepted for symmetry with anchors; always "project" */
		else
			die("unknown option", k);
	}
	if (!obj || !raysf)
		die("needs --obj and --rays", NULL);
	if (!tag)
		tag = basename_noext(raysf, tagbuf, sizeof(tagbuf));

	text = slurp(obj, &len);
	if (obj_parse(text, len, MESH_MAX_TRIANGLES, &md, &fail) != API_OK)
		die("bad OBJ:", fail.msg);
	free(text);
	rays = (struct rec_ray *)slurp(raysf, &len);
	if (len % sizeof(*rays))
		die("rays file size is not a multiple of 28:", raysf);
	n = len / sizeof(*rays);
	if (limit && limit < n)
		n = limit;
	if (split >= n)
		split = 0;
	hits = calloc(n ? n : 1, sizeof(*hits));
	if (batch > (n ? n : 1))
		batch = n ? n : 1;
	room.rays = malloc(batch * sizeof(*room.rays));
	room.hits = malloc(batch * sizeof(*room.hits));
	room.n = malloc(batch * sizeof(*room.n));
	room.res = malloc(batch * sizeof(*room.res));
	if (!hits || !room.rays || !room.hits || !room.n || !room.res)
		die("out of memory", NULL);

	nb = reps < 3 ? 3 : reps > 5 ? 5 : reps;
	rss0 = rss_bytes();	/* the first build's growth, as anchors measures it */
	for (int r = 0; r < nb; r++) {
		double t0 = now_s();
		enum core_result rc;

		mesh_unref(m);
		m = NULL;
		rc = mesh_build(md.xyz, md.nvert, md.idx, md.ntri, &m, NULL);
		if (rc != CORE_OK)
			die("mesh_build failed:", core_result_str(rc));
		tb[r] = (now_s() - t0) * 1e3;
		if (r == 0)
			rss_delta = rss_bytes() - rss0;
	}
	mesh_get_info(m, &info);
	fprintf(stderr, "# %s: %zu vertices, %zu triangles (%zu degenerate); %zu rays from %s\n",
		obj, info.vertices, info.triangles, info.degenerate, n, raysf);

	pass(m, rays, 0, warmup < n ? warmup : n, HIT_CLOSEST, NULL, batch, &room);
	for (int r = 0; r < reps; r++) {
		double t0 = now_s(), t1, t2;

		nhits_a = pass(m, rays, 0, split, HIT_CLOSEST, hits, batch, &room);
		t1 = now_s();
		nhits = nhits_a + pass(m, rays, split, n, HIT_CLOSEST, hits, batch, &room);
		t2 = now_s();
		tc[r] = t2 - t0;
		tca[r] = t1 - t0;
		tcb[r] = t2 - t1;
	}
	if (do_any) {
		for (int r = 0; r < reps; r++) {
			double t0 = now_s(), t1, t2;

			nany = pass(m, rays, 0, split, HIT_ANY, NULL, batch, &room);
			t1 = now_s();
			nany += pass(m, rays, split, n, HIT_ANY, NULL, batch, &room);
			t2 = now_s();
			ta[r] = t2 - t0;
			taa[r] = t1 - t0;
			tab[r] = t2 - t1;
		}
	}
	snprintf(path, sizeof(path), "%s/%s_project.hits", outdir, tag);
	f = fopen(path, "wb");
	if (!f || fwrite(hits, sizeof(*hits), n, f) != n || fclose(f))
		die("cannot write", path);
	{
		double mc = median(tc, reps), mca = median(tca, reps), mcb = median(tcb, reps);
		double ma = do_any ? median(ta, reps) : 0, maa = do_any ? median(taa, reps) : 0;
		double mab = do_any ? median(tab, reps) : 0;
		double bpt = (double)info.memory_bytes / (double)info.triangles;

		printf("{\"kind\":\"anchor\",\"mesh\":\"%s\",\"engine\":\"project\",\"triangles\":%zu,"
		       "\"rays\":%zu,\"split\":%zu,\"build_ms\":%.3f,\"accel_bytes\":%zu,"
		       "\"bytes_per_tri\":%.2f,\"rss_delta_bytes\":%ld,\"mem_note\":\"everything the mesh holds: vertices, indices, "
		       "matrices, ids, BVH\",\"closest_rps\":%.0f,\"closest_rps_a\":%.0f,"
		       "\"closest_rps_b\":%.0f,\"anyhit_rps\":%.0f,\"anyhit_rps_a\":%.0f,"
		       "\"anyhit_rps_b\":%.0f,\"hits\":%zu,\"hits_a\":%zu,\"anyhits\":%zu,\"reps\":%d,"
		       "\"batch\":%zu,\"hits_file\":\"%s\"}\n",
		       tag, info.triangles, n, split, median(tb, nb), info.memory_bytes, bpt, rss_delta,
		       mc > 0 ? n / mc : 0, mca > 0 ? split / mca : 0, mcb > 0 ? (n - split) / mcb : 0,
		       ma > 0 ? n / ma : 0, maa > 0 ? split / maa : 0, mab > 0 ? (n - split) / mab : 0,
		       nhits, nhits_a, nany, reps, batch, path);
	}
	mesh_unref(m);
	mesh_data_release(&md);
	free(rays);
	free(hits);
	free(room.rays);
	free(room.hits);
	free(room.n);
	free(room.res);
	return 0;
}
