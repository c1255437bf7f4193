/* fuzz_obj.c - libFuzzer target for the OBJ reader (api/obj.c); seeds in seeds/obj/. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mesh_data m;
	struct api_fail f;
	enum api_err err;

	/* a small limit, so that the too-many-triangles path is reachable */
	err = obj_parse((const char *)data, size, 64, &m, &f);
	/* the contract: empty on failure; on success indices in range, finite */
	if (err != API_OK && (m.xyz || m.idx || m.nvert || m.ntri))
		__builtin_trap();
	if (err == API_OK && (!m.nvert || !m.ntri || m.ntri > 64))
		__builtin_trap();
	for (size_t i = 0; err == API_OK && i < 3 * m.ntri; i++)
		if (m.idx[i] >= m.nvert)
			__builtin_trap();
	for (size_t i = 0; err == API_OK && i < 3 * m.nvert; i++)
		if (!isfinite(m.xyz[i]))
			__builtin_trap();
	mesh_data_release(&m);
	return 0;
}
