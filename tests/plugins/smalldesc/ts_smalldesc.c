/* ts_smalldesc.so - refused: it exports a textsearch_plugin that is much
 * smaller than struct ts_plugin (its first field even looks right), so
 * reading the descriptor would read past the symbol. */
#include <textsearch.h>

TS_API extern const unsigned int textsearch_plugin;
const unsigned int textsearch_plugin = TEXTSEARCH_PLUGIN_ABI;
