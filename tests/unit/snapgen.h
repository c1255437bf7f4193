/* snapgen.h - random bodies of POST /v1/worlds/{world}/snapshots for the
 * suites: members in random order, optional members present or absent,
 * random whitespace and number spellings (shotgen's), sphere, capsule and box
 * hitboxes; the sequence of shotgen.h's generator. */
#ifndef TESTS_SNAPGEN_H
#define TESTS_SNAPGEN_H

#include <stddef.h>

#include "teststr.h"

/* A snapshot body of 0..max_ents entities of 0..25 hitboxes, at most max_hbs
 * hitboxes in all (both when !bad); !bad: valid but for the rare value a
 * spelling rounds out of range and the rare repeated id (core's to refuse);
 * bad: at most one fault: a value, member or limit refused, a null, a mesh
 * hitbox. */
void snapgen_body(struct sb *b, size_t max_ents, size_t max_hbs, int bad);

#endif
