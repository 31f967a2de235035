// Entry of `dist/module-lexer.js`, a classic script the server inlines before the runtime only
// where a module may come without its links (module-links.ts): the shell document, cards with
// declared gadget bundles, and `/_svc/iframe-runtime.js` (prepended to the runtime there).

import { init, parse } from 'es-module-lexer/minimal/js';
import { LEXER_GLOBAL, type ModuleLexer } from './module-links';

const lexer: ModuleLexer = { init, parse };
(globalThis as Record<string, unknown>)[LEXER_GLOBAL] = lexer;
