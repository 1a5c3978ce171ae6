// Loaded with --import before anything else: from here on, importing any Node built-in (node:crypto,
// crypto, node:buffer, …) fails, so a script that still runs uses only what every Web Crypto runtime
// has. This file itself is the only one allowed to use node:module.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    import { builtinModules } from 'node:module';
    const builtins = new Set(builtinModules);
    export async function resolve(specifier, context, next) {
      const bare = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
      if (specifier.startsWith('node:') || builtins.has(bare)) {
        const error = new Error('blocked: ' + specifier + ' imported from ' + context.parentURL);
        error.code = 'ERR_BLOCKED_BUILTIN';
        throw error;
      }
      return next(specifier, context);
    }
  `)}`,
);
