/* ts_badsize.so - refused: its struct ts_ops has another size (a header
 * from another version of the library). */
#include "../testplugin.h"

TP_OPS(badsize_ops, "badsize");
TS_API extern const struct ts_plugin textsearch_plugin;
const struct ts_plugin textsearch_plugin = {
	TEXTSEARCH_PLUGIN_ABI,
	(unsigned int)(sizeof(struct ts_ops) + sizeof(void *)), &badsize_ops,
	"grown ts_ops"
};
