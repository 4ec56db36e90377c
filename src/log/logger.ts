import type { DestinationStream, Logger as PinoLogger } from 'pino';
import { pino } from 'pino';
import { describeError } from './describe-error.ts';
import { redactSecrets } from './redact.ts';

/** The logger every module takes; import this alias rather than pino itself. */
export type Logger = PinoLogger;

/** Where JSON lines are written: anything with `write(line)`, e.g. a stream or a test buffer. */
export type LogDestination = DestinationStream;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Program or component name, on every line as `name`. */
  readonly name: string;
  /** Janus version, on every line as `version`. */
  readonly version: string;
  /** Defaults to stderr, written synchronously. */
  readonly destination?: LogDestination;
}

/**
 * A JSON-lines logger: `{"level":"info","time":"<ISO 8601>","name":…,"version":…,"msg":…}`.
 *
 * - Secrets are censored in every record and every child binding (see redact.ts for the rule).
 * - `err` and `error` fields go through describeError: one readable message, no HTTP response
 *   bodies or headers, and a stack only for unexpected errors (programming errors).
 * - The default destination is stderr, because the CLI keeps stdout for machine output
 *   (`-o json`); writes are synchronous so the last lines before a crash or SIGKILL are not lost.
 * - `base` replaces pino's pid and hostname: in a pod both are noise next to the pod name
 *   that the log collector already attaches.
 */
export function createLogger(options: LoggerOptions): Logger {
  const errorField = (value: unknown) => describeError(value);
  const logger = pino(
    {
      level: options.level,
      base: { name: options.name, version: options.version },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: redactSecrets,
      },
      serializers: { err: errorField, error: errorField },
    },
    options.destination ?? pino.destination({ dest: 2, sync: true }),
  );
  return redactBindings(logger);
}

/**
 * pino runs `formatters.bindings` only on the root's base bindings, never on `child()` or
 * `setBindings()` (pinojs/pino#1212, #2129), so both are wrapped on the root. Children are
 * created with Object.create(parent) and inherit the wrapped methods.
 */
function redactBindings(logger: Logger): Logger {
  const { child, setBindings } = logger;
  logger.child = function (this: Logger, bindings, options) {
    return child.call(this, redactSecrets(bindings), options);
  } as Logger['child'];
  logger.setBindings = function (this: Logger, bindings) {
    setBindings.call(this, redactSecrets(bindings));
  };
  return logger;
}

/** A logger that writes nothing, for tests and for callers that take an optional logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent', enabled: false });
}
