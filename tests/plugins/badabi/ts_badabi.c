/* ts_badabi.so - refused: built for a plugin ABI this library does not
 * speak. */
#include "../testplugin.h"

TP_OPS(badabi_ops, "badabi");
TS_API extern const struct ts_plugin textsearch_plugin;
const struct ts_plugin textsearch_plugin = {
	TEXTSEARCH_PLUGIN_ABI + 41, (unsigned int)sizeof(struct ts_ops),
	&badabi_ops, "from the future"
};
