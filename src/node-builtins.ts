/**
 * Node built-ins that Janus loads with `require`, not `import`.
 *
 * An ESM import of a built-in builds its module namespace from every export, which runs Node's
 * lazy getters: `import http from 'node:http'` alone loads undici, http2 and zlib (72 internal
 * modules, about 5 MiB resident) that Janus never uses. test/local/node-builtins.test.ts checks
 * that the controller's modules stay free of them.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const http: typeof import('node:http') = require('node:http');
export const https: typeof import('node:https') = require('node:https');
/** Its namespace would load 14 more internal modules (about 1 MiB) for parseArgs alone. */
export const util: typeof import('node:util') = require('node:util');
