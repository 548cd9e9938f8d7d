/* ts_nofind.so - refused: its ops have no find method. */
#include "../testplugin.h"

static struct ts_ops nofind_ops = {
	.name = "nofind",
	.init = tp_init,
	.get_pattern = tp_get_pattern,
	.get_pattern_len = tp_get_pattern_len,
};
TEXTSEARCH_PLUGIN(nofind_ops, "cannot search");
