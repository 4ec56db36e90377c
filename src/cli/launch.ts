/**
 * The entry point (the image's ENTRYPOINT and bin/janus): picks the Node flags for the command
 * about to run, then runs it. Long-running commands want V8 tuned for memory, one-shot commands
 * for speed (node-flags.ts says why, with figures), and V8 flags can only be set when the process
 * starts, so a command that needs flags this process lacks replaces the process with one that
 * has them (execve: same PID, so signals, PID 1 in a container and exit codes are unchanged).
 * The same goes for the environment glibc's malloc reads at start (node-flags.ts).
 *
 * Nothing else is imported before that decision: a re-exec costs only Node's own start.
 */
import { missingEnvironment, missingNodeFlags } from './node-flags.ts';

const [script = '', ...args] = process.argv.slice(1);
const missing = missingNodeFlags(args[0], process.execArgv);
const environment = missingEnvironment(args[0], process.env);
// Without execve (not a POSIX system) the command runs anyway, with V8's defaults.
if ((missing.length > 0 || Object.keys(environment).length > 0) && typeof process.execve === 'function') {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...missing, script, ...args], {
    ...process.env,
    ...environment,
  });
}
await import('./main.ts');
