/**
 * The unit tier is pure: a unit test that starts a process or opens a socket fails here, naming
 * what it tried, instead of passing on a developer's machine and slowing every CI run. Such a test
 * belongs in test/local/ (real tools, no cluster). Worker threads and files stay allowed: the
 * parse pool and the Git object store are pure code that uses them.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);

function refuse(what: string): never {
  throw new Error(`a unit test may not ${what}: move the test to test/local/ (see test/README.md)`);
}

const childProcess = require('node:child_process') as Record<string, unknown>;
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  childProcess[name] = (command: unknown) => refuse(`start a process (${name} ${String(command)})`);
}

const net = require('node:net') as typeof import('node:net');
net.Server.prototype.listen = function listen() {
  return refuse('listen on a socket');
};
net.Socket.prototype.connect = function connect(...args: unknown[]) {
  const [first] = args;
  const where =
    typeof first === 'object' && first !== null
      ? JSON.stringify({ ...(first as object) }).slice(0, 120)
      : String(first);
  return refuse(`open a connection (${where})`);
};
syncBuiltinESMExports();
