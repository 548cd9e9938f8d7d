/* ts_nullops.so - refused: the descriptor has no ops at all. */
#include "../testplugin.h"

TS_API extern const struct ts_plugin textsearch_plugin;
const struct ts_plugin textsearch_plugin = {
	TEXTSEARCH_PLUGIN_ABI, (unsigned int)sizeof(struct ts_ops), NULL,
	"no ops"
};
