/* vec.h - small value types of the geometry: 3-vectors and rays, by value. */
#ifndef CORE_VEC_H
#define CORE_VEC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The smaller / larger of two numbers (NaN-unaware: the second when unordered). */
/* nextafterf(x, -INFINITY) and nextafterf(x, INFINITY), inline: the next
 * float below (above) x; NaN stays NaN, -inf (+inf) stays. */
static inline float f_below(float x)
{
	uint32_t b;

	if (x != x || x == -INFINITY)
		return x;
	if (x == 0)
		return -0x1p-149f;
	memcpy(&b, &x, sizeof(b));
	b = x > 0 ? b - 1 : b + 1;
	memcpy(&x, &b, sizeof(x));
	return x;
}

static inline float f_above(float x)
{
	return -f_below(-x);
}

#define MINF(a, b) ((a) < (b) ? (a) : (b))
#define MAXF(a, b) ((a) > (b) ? (a) : (b))

typedef struct {
	float x, y, z;
} vec3;

/* A ray o + t*d for t in [0, tmax]. t is measured in units of |d|: callers
 * that want world distances pass a unit d. tmax may be INFINITY. */
struct ray {
	vec3 origin;
	vec3 dir;
	float tmax;
};

static inline vec3 v3(float x, float y, float z)
{
	vec3 r = { x, y, z };
	return r;
}
static inline vec3 v3_add(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline vec3 v3_sub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline vec3 v3_scale(vec3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline float v3_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline vec3 v3_cross(vec3 a, vec3 b)
{
	return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
/* The cross product a x b in double, for normals that must not round twice. */
static inline void v3d_cross(const double a[3], const double b[3], double out[3])
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}
static inline vec3 v3_min(vec3 a, vec3 b)
{
	return v3(a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z);
}
static inline vec3 v3_max(vec3 a, vec3 b)
{
	return v3(a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z);
}
static inline float v3_comp(vec3 a, int axis) { return axis == 0 ? a.x : axis == 1 ? a.y : a.z; }
static inline int v3_isfinite(vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

/* Unit vector in double precision, rounded once; the zero vector stays zero. */
static inline vec3 v3_normalize(vec3 a)
{
	double l = sqrt((double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z);
	if (l == 0)
		return a;
	return v3((float)(a.x / l), (float)(a.y / l), (float)(a.z / l));
}

#endif
