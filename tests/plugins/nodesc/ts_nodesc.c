/* ts_nodesc.so - refused: the descriptor exists but is not exported (the
 * author forgot TEXTSEARCH_PLUGIN() and built with -fvisibility=hidden). */
#include "../testplugin.h"

TP_OPS(nodesc_ops, "nodesc");
extern const struct ts_plugin textsearch_plugin;
const struct ts_plugin textsearch_plugin = {
	TEXTSEARCH_PLUGIN_ABI, (unsigned int)sizeof(struct ts_ops), &nodesc_ops,
	"hidden descriptor"
};
